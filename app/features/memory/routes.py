from tenchi.responses import PresentedResponse, present
from tenchi.routes import route, route_group

from app.shared.errors import etag

from .contracts import (
    append_line_contract,
    delete_file_contract,
    file_created,
    file_replaced,
    list_area_contract,
    list_scope_contract,
    read_file_contract,
    replace_fact_contract,
    write_file_contract,
)
from .schemas import MemoryFile, PutOutcome, VersionHeaders
from .use_cases.delete_file_at_path import delete_file_at_path
from .use_cases.list_area import list_area
from .use_cases.list_scope import list_scope
from .use_cases.post_line import post_line
from .use_cases.post_replacement import post_replacement
from .use_cases.put_file import put_file
from .use_cases.read_file_at_path import read_file_at_path


def version_headers(file: MemoryFile) -> VersionHeaders:
    return VersionHeaders.model_validate({"ETag": etag(file.version)})


def present_put(outcome: PutOutcome) -> PresentedResponse:
    definition = file_created if outcome.created else file_replaced
    return present(definition, outcome.file, headers=version_headers(outcome.file))


routes = route_group(
    route(list_scope_contract, list_scope),
    route(list_area_contract, list_area),
    route(read_file_contract, read_file_at_path, response_headers=version_headers),
    route(write_file_contract, put_file, present=present_put),
    route(append_line_contract, post_line, response_headers=version_headers),
    route(replace_fact_contract, post_replacement, response_headers=version_headers),
    route(delete_file_contract, delete_file_at_path),
)
