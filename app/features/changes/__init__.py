"""The change feed: what changed in the caller's memory, in commit order."""
