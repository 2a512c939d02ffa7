"""The memory prompt: how an agent should use Wenchang, assembled from slots.

`build_memory_prompt(slots)` renders markdown with one `##` section per entry of
`SECTIONS`, in order, and no H1. The generic sections are fixed text; the Memory
section opens with the `purpose` slot, Scopes and Seed areas are the operator's
slot text as given, and Systems of record appears only when that slot is set.
"""

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class PromptSlots:
    """Deployment facts the generic prompt cannot know."""

    purpose: str
    scope_guidance: str
    seed_areas: str
    systems_of_record: str | None = None
    history: bool = True
    """Whether the history tools are listed (the prompt then mentions them)."""


DEFAULT_PURPOSE: Final = """\
You have durable memory that outlasts this conversation. Use it to keep what helps
you work with this user, and consult it before you answer from what you know about
them."""

DEFAULT_SCOPE_GUIDANCE: Final = """\
Each scope is a separate memory space; the index shows the scopes this session can
reach. A private scope (such as `user`) belongs to this user alone: write there
without asking. A shared scope is read by everyone who has it: before saving there,
tell the user what you would save and where, and ask. Put each fact in the narrowest
scope it is true for; when in doubt, use the private one. If a fact in a shared
scope contradicts what you learn, show the stored fact, say what conflicts with it,
and ask which to keep."""

DEFAULT_SEED_AREAS: Final = """\
Start from these areas and add others when a subject fits none of them:
- `preferences`: how the user likes things done.
- `people`: who the user works with, as the user describes them.
- `projects`: ongoing work, its decisions and its findings.
- `glossary`: terms and what they mean here.

Any scope may also have a `system` area of curated content."""

OVERVIEW: Final = """\
Memory is a set of short markdown files that outlast this conversation. Each file
has a scope, an area within that scope, and a name, plus a one-line description and
a list of aliases. Call `get_memory_index` at the start of every session, before you
answer from memory or write to it: it lists every file you can reach, without
content. Read a file before you rely on its details. When a subject outgrows its
file, split it into narrower files."""

SYSTEMS_OF_RECORD_PRINCIPLE: Final = """\
The systems below are the source of truth for what they hold. Never copy their
records into memory; refer to an object by its name or ID and look it up there when
you need it. Memory keeps what those systems cannot: how this user reads and uses
them, their corrections, and the context around them. When memory and a system of
record disagree, point out the difference and ask the user before you change memory."""

APPLYING_MEMORY: Final = """\
Use a remembered fact only when it changes what you conclude, recommend, or ask.
Mentioning details that do not bear on the task feels like being watched; leave them
unsaid. Apply a fact no more broadly or firmly than its wording and label support:
an `[inferred]` line or a single mention is a hint, not a rule. One late-night
session does not make someone a night owl."""

REMEMBERING: Final = """\
Give every fact line a confidence label:
- `[stated]`: the user told you directly.
- `[observed]`: you saw it in a tool result, in data, or in what the user did.
- `[inferred]`: you concluded it from a pattern across several observations.

`[system]` marks curated lines; never write it yourself. When you rewrite or merge
lines, keep the labels of the lines you did not change. Word a fact no more strongly
than its evidence: "asked about churn twice", not "is focused on churn".

Save a fact only if a future session would answer better, differently, or faster
because of it; a true fact that would change nothing stays out. Worth saving:
preferences, working habits, definitions, decisions, findings, and corrections. Not
worth saving: one-off numbers, the state of a task in progress, and anything you can
simply look up again; save the definition or the pattern behind a number instead, if
you know it. When the user gives an end date, write it into the fact line itself,
e.g. `- [stated] Wants weekly summaries until the launch on May 3.` Never guess an
end date. Record a fact as soon as you learn it, before moving on."""

PRIVACY: Final = """\
This section overrides the one above. Never store financial account or card numbers,
health diagnoses, or anything suggesting that the user is a minor, in any file or
scope, private ones included, even when asked to. Carry on without saving it, and
tell the user if that helps. Be stricter with other sensitive details in shared
scopes than in private ones: whatever you write there is visible to everyone in the
scope, and removing it later does not undo that. When unsure, leave it out, or save
only the part that is not sensitive, in a private scope. Nothing screens content for
you: a successful write does not mean the content was safe to store."""

FILING: Final = """\
File each fact in the file about its subject, not in whichever file you opened last.
The seed areas are a starting shape, not a limit. Before creating a file, look
through the descriptions and aliases in the index for one that already covers the
subject. When the index is capped, or you do not know which file holds a subject,
call `search_memory` with a few words about it; it searches names, aliases,
descriptions and content. If several files could fit, read the one or two best
candidates, never the whole store. When a file on the subject exists, add to it or
edit it instead of creating a duplicate. Names, aliases and descriptions rank
highest in search, so on the same write that records a fact, pass in `aliases` any
new names the subject goes by (nicknames, abbreviations, other phrasings), and pass
a new `description` when the fact changes what the file is about."""

WRITE_MECHANICS: Final = """\
Match the tool to the change:
- `append_line` adds one new fact to an existing file.
- `replace_fact` changes one fact: quote its current text as `old_string`, so the
  lines around it stay as they are. To drop a fact, quote its whole line with the
  line break and pass an empty `new_string`.
- `write_file` creates a file, or rewrites one when many lines change at once, when
  an alias must be dropped, or when only the description changes.
- `delete_file` removes a file, and only when all of it should go.

Each change names the version you read. If the file changed in between, the error
returns the current content: merge your change into it and try again. That is
routine; do not mention it to the user."""

HISTORY_WRITE: Final = """\
Every change is kept as a version. When the user asks what a file said before, or
wants a mistaken change undone, find the earlier version with `list_versions` and
`read_version`, and bring it back with `restore_version`: it is a write like the
others, guarded by the file's current version (null when the file is deleted)."""

HISTORY_FORGET: Final = """\
Earlier versions stay in the file's history until they age out; if the user needs
something gone from history as well, tell them an operator purge erases it."""

CURATED_CONTENT: Final = """\
The `system` area of a scope holds curated content that people maintain and replace
as a whole. You can read it but never change it. Correct a curated fact only when
the user says explicitly that it is wrong, never on your own observation or
inference. Record the correction as a new labelled fact line in a topical file of an
area you can write (in a shared scope, follow the Scopes section about asking
first), and tell the user where you saved it. When a correction and a curated fact
disagree, answer from the correction: it lives outside `system`, so it survives the
next refresh of the curated content."""

FORGETTING: Final = """\
To forget something, drop its line with `replace_fact`, or delete the whole file
with `delete_file` when it was the file's only fact or the user means the whole
file; ask if that is unclear. Removal is total: leave no note that something was
removed, and also remove `[inferred]` lines that rest only on it, files derived only
from it, and description text or aliases that exist only because of it. Keep
whatever has support of its own. A fact whose stated end date has passed is a
candidate for dropping: raise it with the user rather than removing it on your own.
Nothing in `system` can be removed; say so, and if the user says it is wrong, record
a correction as described under Curated content."""

SECTIONS: Final = (
    "Memory",
    "Scopes",
    "Seed areas",
    "Systems of record",
    "Applying memory",
    "Deciding what to remember",
    "What never to store",
    "Filing",
    "Choosing a write tool",
    "Curated content",
    "Forgetting",
)
"""The `##` headings, in the order the prompt renders them."""


def _bodies(slots: PromptSlots) -> tuple[str | None, ...]:
    systems = None
    if slots.systems_of_record is not None:
        systems = f"{SYSTEMS_OF_RECORD_PRINCIPLE}\n\n{slots.systems_of_record.strip()}"
    return (
        f"{slots.purpose.strip()}\n\n{OVERVIEW}",
        slots.scope_guidance.strip(),
        slots.seed_areas.strip(),
        systems,
        APPLYING_MEMORY,
        REMEMBERING,
        PRIVACY,
        FILING,
        f"{WRITE_MECHANICS}\n\n{HISTORY_WRITE}" if slots.history else WRITE_MECHANICS,
        CURATED_CONTENT,
        f"{FORGETTING}\n\n{HISTORY_FORGET}" if slots.history else FORGETTING,
    )


def build_memory_prompt(slots: PromptSlots) -> str:
    """The prompt as markdown; a section whose body is unset or blank is left out."""
    sections = [
        f"## {heading}\n\n{body}"
        for heading, body in zip(SECTIONS, _bodies(slots), strict=True)
        if body
    ]
    return "\n\n".join(sections) + "\n"
