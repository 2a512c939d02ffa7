"""The search tool agents call over MCP, declared and bound to its use case."""

from tenchi.tools import tool, tool_group, tool_handler

from app.shared.errors import (
    backend_unavailable,
    invalid_argument,
    restricted_scope,
    unauthorized,
)

from .schemas import SearchMemory, SearchResults
from .use_cases.search_memory import search_memory

SEARCH_MEMORY_DESCRIPTION = """\
Search every memory file this session can reach for words they contain.

Use it when the index is capped (files were left out of it), or when you do not
know which file holds a fact: search before you create a file, so a fact lands
beside the ones it belongs with. `query` is plain text (1-256 characters):
every word must occur in a file's name, aliases, description or content;
case and accents do not matter; the last word also matches as the start of a
word ("oolo" finds "oolong"); Chinese, Japanese or Thai text matches inside
longer runs. Quotes, dashes and words such as AND or NOT are searched as
written, never as operators. Hits come best first (a match in a name or alias
ranks above one in content), each with its version and a `snippet` whose
matches are wrapped in ** marks; read_file gives the whole file. Narrow with
`scope`, or `scope` and `area`. While `next_cursor` is not null, call again
with the same query, scope and area and cursor=next_cursor for more.

Errors:
- InvalidArgumentError: fix the argument it names - a blank or over-long
  query, a limit outside 1-50, a scope outside this session, an area without
  its scope, or a cursor issued for another search (omit it to start over)."""

search_memory_tool = tool(
    "search_memory",
    request=SearchMemory,
    result=SearchResults,
    description=SEARCH_MEMORY_DESCRIPTION,
    errors=(unauthorized, backend_unavailable, invalid_argument, restricted_scope),
    read_only=True,
    open_world=False,
)

tools = tool_group(tool_handler(search_memory_tool, search_memory))
