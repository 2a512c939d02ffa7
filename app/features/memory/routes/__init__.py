from app.shared.bindings import Binding

from ..contracts import (
    append_line_contract,
    delete_file_contract,
    list_area_contract,
    list_scope_contract,
    list_versions_contract,
    read_file_contract,
    read_version_contract,
    rename_file_contract,
    replace_fact_contract,
    restore_version_contract,
    write_file_contract,
)
from ..use_cases.append_line import append_line
from ..use_cases.delete_file import delete_file
from ..use_cases.list_prefix import list_prefix
from ..use_cases.list_versions import list_versions
from ..use_cases.read_file import read_file
from ..use_cases.read_version import read_version
from ..use_cases.rename_file import rename_file
from ..use_cases.replace_fact import replace_fact
from ..use_cases.restore_version import restore_version
from ..use_cases.write_file import write_file
from .headers import present_write

# The first routes keep the operationIds they were published with.
bindings = (
    Binding(list_scope_contract, list_prefix),
    Binding(list_area_contract, list_prefix),
    Binding(read_file_contract, read_file, operation_id="read_file_at_path"),
    Binding(
        write_file_contract, write_file, present=present_write, operation_id="put_file"
    ),
    Binding(append_line_contract, append_line, operation_id="post_line"),
    Binding(replace_fact_contract, replace_fact, operation_id="post_replacement"),
    Binding(delete_file_contract, delete_file, operation_id="delete_file_at_path"),
    Binding(list_versions_contract, list_versions),
    Binding(read_version_contract, read_version),
    Binding(restore_version_contract, restore_version, present=present_write),
    Binding(rename_file_contract, rename_file),
)
