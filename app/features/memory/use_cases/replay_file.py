from app.server.context import AppContext

from ..domain import Receipt
from ..schemas import MemoryFile, ReadFile
from .read_file import read_file


async def replay_file(
    request: ReadFile, receipt: Receipt, context: AppContext
) -> MemoryFile:
    """The answer to a retried keyed mutation that already landed, read back.

    While the file is still at ``receipt.version`` this is exactly the first
    answer. If it has moved on, the retry gets the file as it stands now (a
    consistent content and version): no copy of the earlier content is kept.
    """
    # doctor: public -- read_file checks the caller's grant, as on first run.
    del receipt  # the file's history, when kept, could answer the exact version
    return await read_file(request, context)
