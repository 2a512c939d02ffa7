"""The change feed's route: its contract bound to its use case."""

from tenchi.routes import route_group

from ..memory.routes.binding import bind
from .contracts import read_changes_contract
from .use_cases.read_changes import read_changes

routes = route_group(bind(read_changes_contract, read_changes))
