"""The search route: its contract bound to its use case."""

from tenchi.routes import route_group

from ..memory.routes.binding import bind
from .contracts import search_memory_contract
from .use_cases.search_memory import search_memory

routes = route_group(bind(search_memory_contract, search_memory))
