"""Operator tasks (``tenchi task run memory.export --input '{...}'``), composed.

Settings are read when a task runs, not on import, so ``tenchi task list`` works
anywhere; ``build_task_runner`` composes a runner for explicit settings (tests).
"""

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from tenchi.tasks import TaskRunner, create_task_runner

from app.features.memory.tasks import tasks
from app.server.runtime import Runtime, create_context, create_lifespan
from app.server.settings import Settings, load_settings

SURFACE = "task"


def build_task_runner(settings: Settings) -> TaskRunner:
    return create_task_runner(
        tasks=tasks,
        context_factory=create_context,
        lifespan=create_lifespan(settings, surface=SURFACE),
    )


@asynccontextmanager
async def _configured_lifespan() -> AsyncGenerator[Runtime]:
    async with create_lifespan(load_settings(), surface=SURFACE)() as runtime:
        yield runtime


runner = create_task_runner(
    tasks=tasks, context_factory=create_context, lifespan=_configured_lifespan
)
