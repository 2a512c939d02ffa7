"""The change feed's HTTP contract (its event stream: ``app/server/change_stream``)."""

from tenchi.contracts import contract

from app.features.memory.contracts import TAGS
from app.shared.errors import cursor_expired, invalid_argument

from .schemas import ChangesPage, ReadChanges

read_changes_contract = contract(
    method="GET",
    path="/changes",
    query=ReadChanges,
    response=ChangesPage,
    errors=(invalid_argument, cursor_expired),
    name="read_changes",
    summary=(
        "Changes of the caller's files in a scope after a cursor, oldest first "
        "(with Accept: text/event-stream, a stream of them)."
    ),
    tags=TAGS,
)
