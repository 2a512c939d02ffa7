"""The feature's shape: operations in use_cases, their HTTP binding in routes/."""

import re
from pathlib import Path

from app.features.memory.routes import routes

FEATURE = Path(__file__).parents[1]
APP = FEATURE.parents[1]
HTTP_NOTIONS = re.compile(r"If-Match|If-None-Match|Idempotency|headers")
OPT_OUT = "doctor" + ": public"


def test_no_use_case_knows_an_http_header() -> None:
    """Preconditions, ETags and Idempotency-Key are the routes' business."""
    offenders = [
        path.name
        for path in sorted((FEATURE / "use_cases").glob("*.py"))
        if HTTP_NOTIONS.search(path.read_text())
    ]

    assert offenders == []


def test_no_module_opts_out_of_the_authorization_check() -> None:
    """Every use case satisfies tenchi doctor with a real policy call."""
    offenders = [
        str(path.relative_to(APP))
        for path in sorted(APP.rglob("*.py"))
        if OPT_OUT in path.read_text()
    ]

    assert offenders == []


def test_every_memory_route_is_bound_by_the_one_binding() -> None:
    """No route of the feature hand-writes its own header handling."""
    modules = {route.use_case.__module__ for route in routes}

    assert modules == {"app.features.memory.routes.binding"}
