"""The feature's shape: operations in use_cases, their routes declared in routes/."""

import re
from pathlib import Path

from app.features.memory.routes import bindings
from app.server.http.binding import bound

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


def test_every_memory_route_is_bound_by_the_one_binder() -> None:
    """The feature declares its routes; the server's binder alone handles headers."""
    modules = {route.use_case.__module__ for route in bound(*bindings)}

    assert modules == {"app.server.http.binding"}
