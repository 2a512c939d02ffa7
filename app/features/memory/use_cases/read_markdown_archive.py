"""read_markdown_archive: the caller's own files as the markdown tree, to zip."""

from collections.abc import AsyncIterator

from app.server.context import AppContext
from app.shared.identity import require_identity

from ..domain.expiry import Expiry
from ..policy import locate_prefix
from ..ports.markdown_transfers import ArchivedFile, archived_files
from ..schemas import ReadMarkdownArchive


async def read_markdown_archive(
    request: ReadMarkdownArchive, context: AppContext
) -> AsyncIterator[ArchivedFile]:
    """Each live file of the caller's entity in ``scope`` (else in every scope
    the token holds) as ``memory.export_markdown`` writes it, read as the
    caller iterates. The grants are checked here, before the first file."""
    identity = require_identity(context.identity)
    scopes = [request.scope] if request.scope else sorted(identity.grants)
    prefixes = [(scope, locate_prefix(identity, scope, None)) for scope in scopes]
    return archived_files(context.storage, prefixes, Expiry(context.clock))
