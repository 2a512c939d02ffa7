"""The expired files a sweep lists, in key order, a batch at a time."""

from collections.abc import AsyncIterator

from app.shared.progress import ProgressBar

from ..domain import format_timestamp, split_key
from ..domain.expiry import Expiry
from ..domain.keys import entity_prefix_of_key
from ..schemas import SweptFile
from . import ListedObject, Storage
from .storage_reads import list_batches


async def expired_files(
    storage: Storage, prefix: str, expiry: Expiry, bar: ProgressBar
) -> AsyncIterator[tuple[ListedObject, SweptFile]]:
    """Every file under ``prefix`` that ``expiry`` finds expired, as listed
    (its version guards the erase) and as a report names it; ``bar`` advances
    by each file looked at, an expired one once the caller is done with it."""
    async for batch in list_batches(storage, prefix):
        for listed in batch:
            meta = listed.metadata
            parts = split_key(listed.key)
            if parts is None or meta.expires_at is None or not expiry.expired(meta):
                bar.advance()
                continue
            scope, area, name = parts
            entity = entity_prefix_of_key(listed.key)[len(scope) + 1 : -1]
            expires_at = format_timestamp(meta.expires_at)
            yield (
                listed,
                SweptFile(
                    scope=scope,
                    entity_id=entity,
                    area=area,
                    name=name,
                    expires_at=expires_at,
                ),
            )
