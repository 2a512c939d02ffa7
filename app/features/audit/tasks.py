from tenchi.tasks import task, task_group

from .use_cases.audit_memory import audit_memory

audit_task = task(
    "memory.audit",
    audit_memory,
    description=(
        "The audit events of one entity of one scope, newest first: who read or "
        "changed which file, when, through which surface. Filter by since, until "
        "and operation; pass next_cursor as cursor for the next page."
    ),
)

tasks = task_group(audit_task)
