"""What agents read of each memory tool: its description (prose, not logic).

The first line of each names the tool's job and contains the word "memory"
once; the MCP server puts the configured product name before it.
"""

GET_MEMORY_INDEX_DESCRIPTION = """\
Load the index of every memory file this session can reach, without content.

Call this first in every session, before you answer from memory or write to it.
Each entry gives a file's scope, area and name, its one-line description, its
aliases, which clients wrote it (sources), last_updated, and its version. The
other tools take the same scope, area and name (the name without `.md`); the
entity behind each scope is filled in for you. Areas are lowercase slugs such as
`preferences`. The `system` area holds curated content and is read-only.
Descriptions and aliases are how you find the file a fact belongs in; to find a
file by what it says, use search_memory.

When `capped` is non-empty the index ran out of room: each row names a scope
and area and how many files were left out. Use search_memory to find a file
among them, or page through such an area with list_prefix(scope, area).

Every error carries `category`. recoverable: correct the call from the attached
details and retry in the same turn without asking the user. permanent: do not
retry. transient (BackendUnavailableError): retry shortly. A
ResolverFailureError means memory is unavailable for this session: continue
without it."""

READ_FILE_DESCRIPTION = """\
Read one memory file: its content, metadata, and version.

Use it when the index shows a file whose content you need before answering or
changing it. Any area may be read, including `system`. Keep the returned
`version`: a change to this file passes it as `expected_version`.

Errors:
- NotFoundError (reason file_absent): no file exists there yet. Create it with
  write_file and expected_version=null if a fact belongs there.
- InvalidArgumentError: fix the argument it names. A scope outside this session
  is reported this way, and the message lists the scopes you can use."""

LIST_PREFIX_DESCRIPTION = """\
List the memory files of a scope, or of one area in it, a page at a time.

Use it to browse an area the index listed under `capped`, or to check what
exists in an area before creating a file. Entries carry the same metadata and
version as index entries, without content, in ascending area/name order. While
`next_cursor` is not null, call again with the same scope and area and
cursor=next_cursor for the next page. Listing is not a snapshot: a file written
or deleted between pages may or may not appear.

Errors:
- InvalidArgumentError: fix the argument it names - a scope outside this
  session (the message lists the available ones), an area that is not a
  lowercase slug, or a cursor issued for another listing (omit the cursor to
  start over)."""

WRITE_FILE_DESCRIPTION = """\
Create a memory file or replace one whole.

Use it to create a file (expected_version=null) or to rewrite one when many lines
change at once, an alias must be dropped, or only the description changes. To
add or change a single fact prefer append_line or replace_fact, which keep the
other lines intact. `content` is the whole markdown body, one fact per line as
`- [label] text`. `description` (one line) and `aliases` replace the stored
values, so pass everything you want kept.

Errors, each handled without asking the user:
- VersionConflictError is routine: the file changed since you read it, or it
  already exists. Merge your change into the `content` it returns and retry
  with its `version`.
- NotFoundError (file_absent): the file you meant to replace is gone. Retry with
  expected_version=null to create it.
- OversizeWriteError: the body is `size` bytes and the limit is `limit`. Shorten
  it, or split the subject into narrower files.
- FileQuotaExceededError: no room for another file. Add to an existing file, or
  delete one that is no longer needed.
- RestrictedScopeError is permanent: `system` is read-only, or the scope needs a
  role you lack. Write somewhere else."""

APPEND_LINE_DESCRIPTION = """\
Add one fact line to the end of an existing memory file.

This is the usual way to record a new fact. `line` is exactly one line
`- [label] text` with a label of stated (the user said it), observed (you saw it
in data or behaviour) or inferred (you concluded it from several observations),
e.g. `- [stated] Prefers tea`. Optional `aliases` are added to the file's
aliases and never removed (write_file replaces the whole list); an optional
one-line `description` replaces the stored one.

Errors, each handled without asking the user:
- VersionConflictError is routine: the file changed since you read it. Merge
  your change into the `content` it returns - if your fact is not there yet,
  retry with its `version`.
- NotFoundError (file_absent): the file does not exist. Create it with
  write_file (expected_version=null) holding the line.
- OversizeWriteError: the file is full. Put the fact in a narrower new file.
- InvalidArgumentError: fix the argument it names (usually the line's format).
- RestrictedScopeError is permanent: write somewhere else."""

REPLACE_FACT_DESCRIPTION = """\
Change one fact in a memory file by quoting the text it replaces.

Use it to correct or update a fact in place: quote the current text as
`old_string` and give the new text as `new_string`. To drop one fact, quote its
whole line including the line break and pass an empty `new_string`.
`old_string` must occur exactly once in the content. Pass the version you read
as `expected_version`; if the file changed meanwhile but your quote still
matches exactly once, the edit is applied to the current content. Optional
`aliases` are added and never removed; an optional one-line `description`
replaces the stored one.

Errors, each handled without asking the user:
- ReplaceFactMatchError: old_string matched `match_count` spans (none or
  several). Quote a span that occurs exactly once in the `content` it returns,
  and retry with its `version`.
- VersionConflictError is routine: merge your change into the `content` it
  returns and retry with its `version`.
- NotFoundError (file_absent): there is no such file; check the index.
- OversizeWriteError: the result would exceed `limit` bytes. Shorten it.
- RestrictedScopeError is permanent: write somewhere else."""

DELETE_FILE_DESCRIPTION = """\
Delete a memory file.

Use it only when the whole file should go: the user wants its subject forgotten,
or its only fact is being forgotten. To drop one fact, use replace_fact instead.

Errors:
- VersionConflictError is routine: the file changed since you read it. Look at
  the `content` it returns and retry with its `version` only if the file should
  still go.
- NotFoundError (file_absent): it is already gone; nothing more to do.
- RestrictedScopeError is permanent: `system` is read-only. Tell the user you
  cannot delete it."""

RENAME_FILE_DESCRIPTION = """\
Move a memory file to another area or name in its scope.

Content, description, aliases and history move with it under a new version;
the old path is gone. VersionConflictError is routine: naming the new path, a
file is already there; naming the old path, it changed since you read it, so
retry with its `version`."""

LIST_VERSIONS_DESCRIPTION = """\
List the saved versions of one memory file, newest first, without content.

Use it when the user asks what a file said before, who changed it or when, or
to undo a change: after a wrong write, replace or delete, the earlier text is
still here. Each entry has `version`, `operation` (the tool or task that made
it), `actor` (which client wrote it), `at`, `size`, and `deleted` (true for the
record a delete left). A deleted file's history stays listed. Pass `next_cursor`
back as `cursor` for older entries. Old versions are pruned after a while.
NotFoundError (file_absent): no such file and no history of one."""

READ_VERSION_DESCRIPTION = """\
Read one saved version of a memory file: the record and the file as it stood.

Take `version` from list_versions. The result has the record's fields and
`file`, the whole file object of that version (a delete's record has empty
content). Reading changes nothing. NotFoundError (version_absent): that
version is unknown or was pruned; call list_versions again."""

RESTORE_VERSION_DESCRIPTION = """\
Bring back an earlier version of a memory file as a new version.

Use it to undo a mistaken change when the user wants the earlier text back. It
writes that version's content, description and aliases as a new version;
nothing in the history is removed. Pass the file's current version as
`expected_version`, or null when the file is deleted now (this re-creates it).

Errors:
- VersionConflictError is routine: the file changed since you read it (or
  exists although you passed null). Check its `content`; retry with its
  `version` only if the restore is still wanted.
- NotFoundError (version_absent): no such version; call list_versions.
- InvalidArgumentError (version): that record is a delete and has no content;
  pick the version listed just before it.
- RestrictedScopeError is permanent: `system` is read-only."""
