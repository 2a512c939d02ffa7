"""The transport conformance suite: every documented behaviour, written once.

Subclass ``TransportConformance`` in a ``Test*`` class and supply one fixture,
``connect``: a callable that opens a ``Transport`` acting as a given identity
(``None``: credentials that do not resolve). The backend behind it must run
with ``SUITE_SETTINGS`` and record writes with the identity's label as source.
Each case creates a fresh identity, so one backend may serve a whole module::

    class TestMyTransport(TransportConformance):
        @pytest.fixture
        def connect(self) -> Connect:
            return my_connect

Errors are compared by exception class and by their whole error payload,
which is built by the same core functions that raise it in-process.
"""

from .access import AccessConformance
from .edits import EditConformance
from .files import FileConformance
from .harness import (
    SOURCE,
    SUITE_SETTINGS,
    Connect,
    Transport,
    conformance_identity,
)
from .history import HistoryConformance
from .listing import ListingConformance
from .renames import RenameConformance

__all__ = [
    "SOURCE",
    "SUITE_SETTINGS",
    "Connect",
    "Transport",
    "TransportConformance",
    "conformance_identity",
]


class TransportConformance(
    FileConformance,
    EditConformance,
    AccessConformance,
    ListingConformance,
    HistoryConformance,
    RenameConformance,
):
    """Every conformance case; supply ``connect``."""
