"""One recorded write's change-log entry on GCS: claimed before, settled after."""

from app.features.memory.ports import Change
from app.infra.gcs.change_log import Claim, GcsChangeLog, seq_of
from app.infra.gcs.resources import ObjectResource


class LoggedWrite:
    """One write's entry: claimed before its mutation, settled after it.

    Untracked writes (no ``change``) have none: ``stamp`` is empty for them.
    """

    def __init__(self, log: GcsChangeLog, key: str, change: Change | None) -> None:
        self._log, self._key, self._change = log, key, change
        self._claim: Claim | None = None

    async def stamp(self, replaced: ObjectResource | None) -> dict[str, str]:
        """What the mutation replacing ``replaced`` (None: an absent object)
        stamps: a claim numbered above the replaced version's."""
        if self._change is None:
            return {}
        if replaced is None:
            above = await self._log.newest_archived_seq(self._key)
        else:
            above = seq_of(replaced)
        if self._claim is not None and self._claim.seq > above:
            return self._claim.stamp()
        await self.end(None)
        self._claim = await self._log.claim(self._key, self._change, above)
        return self._claim.stamp()

    async def end(self, version: str | None) -> None:
        """Settle the claim (if any) as landed at ``version``, or void."""
        if self._claim is not None and self._change is not None:
            await self._log.settle(self._claim, version, self._change.at)
            self._claim = None
