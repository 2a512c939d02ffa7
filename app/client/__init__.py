"""The typed Python client of Wenchang's HTTP API and its exceptions."""

from app.client import errors
from app.client.connect import open_memory_client
from app.client.errors import *  # noqa: F403
from app.client.memory_client import MemoryClient
from app.client.retries import transient_retry

__all__ = ["MemoryClient", "open_memory_client", "transient_retry"]
__all__ += errors.__all__
