from app.server.context import AppContext

from ..schemas import FilePath, MemoryFile, ReadFile
from .read_file import read_file


async def read_file_at_path(params: FilePath, context: AppContext) -> MemoryFile:
    # doctor: public -- read_file authorizes the caller.
    request = ReadFile(scope=params.scope, area=params.area, name=params.name)
    return await read_file(request, context)
