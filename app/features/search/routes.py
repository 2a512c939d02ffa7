"""The search route: its contract bound to its use case."""

from app.shared.bindings import Binding

from .contracts import search_memory_contract
from .use_cases.search_memory import search_memory

bindings = (Binding(search_memory_contract, search_memory),)
