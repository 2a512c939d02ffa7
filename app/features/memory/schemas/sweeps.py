"""What memory.sweep_expired takes and answers."""

from pydantic import BaseModel

from .fields import Strict
from .transfers import KeySegment


class SweepExpired(Strict):
    """Operator input: every entity, one scope's, or one entity's expired files."""

    scope: KeySegment | None = None
    entity_id: KeySegment | None = None
    dry_run: bool = True


class SweptFile(BaseModel):
    scope: str
    entity_id: str
    area: str
    name: str
    expires_at: str


class SweepReport(BaseModel):
    dry_run: bool
    files: list[SweptFile]
    """Files erased (or, on a dry run, that would be), in key order."""
    kept: int
    """Expired files changed (a new version, maybe a new expiry) or deleted
    between listing and erasing: not erased."""
