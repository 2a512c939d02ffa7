"""The service's clock: every moment it stores or compares is in UTC."""

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)
