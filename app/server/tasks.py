"""Operator tasks (``tenchi task run memory.export --input '{...}'``), composed.

Settings are read when a task runs, not on import, so ``tenchi task list`` works
anywhere; ``build_task_runner`` composes a runner for explicit settings (tests).
"""

import os
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager

from tenchi.execution import UseCaseObserver
from tenchi.tasks import (
    Task,
    TaskGroup,
    TaskRunner,
    create_task_runner,
    task,
    task_group,
)

from app.features.audit.tasks import tasks as audit_tasks
from app.features.memory.tasks import tasks as memory_tasks
from app.server.auditing import audited_use_case
from app.server.otel import Telemetry, telemetry_from_environment
from app.server.runtime import Runtime, create_context, create_lifespan
from app.server.settings import Settings, load_settings

SURFACE = "task"


def _audited(declared: Task) -> Task:
    use_case = audited_use_case(
        declared.name, declared.use_case, mutates=True, with_change=False
    )
    return task(declared.name, use_case, description=declared.description)


def audited_tasks(*groups: TaskGroup) -> TaskGroup:
    """Every task of ``groups``, each call recorded in the audit log."""
    return task_group(*(_audited(declared) for group in groups for declared in group))


tasks = audited_tasks(memory_tasks, audit_tasks)


def build_task_runner(
    settings: Settings, *, telemetry: Telemetry | None = None
) -> TaskRunner:
    return create_task_runner(
        tasks=tasks,
        context_factory=create_context,
        lifespan=create_lifespan(settings, surface=SURFACE),
        use_case_observers=telemetry.use_case_observers if telemetry else (),
    )


@asynccontextmanager
async def _configured_lifespan() -> AsyncGenerator[Runtime]:
    async with create_lifespan(load_settings(), surface=SURFACE)() as runtime:
        yield runtime


def _observers() -> Sequence[UseCaseObserver]:
    telemetry = telemetry_from_environment(os.environ)
    return () if telemetry is None else telemetry.use_case_observers


runner = create_task_runner(
    tasks=tasks,
    context_factory=create_context,
    lifespan=_configured_lifespan,
    use_case_observers=_observers(),
)
