"""The change feed's route: its contract and the use case that serves it."""

from app.shared.bindings import Binding

from .contracts import read_changes_contract
from .use_cases.read_changes import read_changes

bindings = (Binding(read_changes_contract, read_changes),)
