"""The memory tool's route."""

from tenchi.routes import route_group

from ..memory.routes.binding import bind
from .contracts import run_memory_command_contract
from .use_cases.run_memory_command import run_memory_command

routes = route_group(bind(run_memory_command_contract, run_memory_command))
