"""The memory tool's route."""

from app.shared.bindings import Binding

from .contracts import run_memory_command_contract
from .use_cases.run_memory_command import run_memory_command

bindings = (Binding(run_memory_command_contract, run_memory_command),)
