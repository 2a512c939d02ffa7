"""Hot routes tried first: every request still reaches the route it reached before."""

import re
from pathlib import Path

import pytest
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from app.infra.tokens.token_file_resolver import FixedResolver
from app.server import asgi
from app.server.http.route_order import HOT_PATHS
from app.server.settings import Settings
from app.shared.identity import Grant, Identity

METHODS = ("GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS")


def _chosen(routes: list[BaseRoute], scope: Scope) -> tuple[str, str] | None:
    """What the router dispatches to (first full match, else the first partial),
    named by path and methods."""
    partial = None
    for route in routes:
        match, _ = route.matches(scope)
        name = (
            getattr(route, "path", ""),
            str(sorted(getattr(route, "methods", None) or ())),
        )
        if match is Match.FULL:
            return name
        if match is Match.PARTIAL and partial is None:
            partial = name
    return partial


def _sample_paths(routes: list[BaseRoute]) -> set[str]:
    paths = {"/", "/v1", "/v1/files", "/ui/", "/ui/index.html", "/nowhere"}
    for route in routes:
        path = getattr(route, "path", "")
        for value in ("x", "index", "versions", "lines"):
            paths.add(re.sub(r"{[^}]+}", value, path))
            paths.add(re.sub(r"{[^}]+}", value, path) + "/" + value)
    return paths


def _routes(tmp_path: Path) -> list[BaseRoute]:
    settings = Settings(storage="memory://", tokens_file=str(tmp_path / "t.json"))
    resolver = FixedResolver(Identity({"user": Grant("a", "owner")}))
    return list(asgi.build_app(settings, resolver=resolver).router.routes)


def test_hot_routes_are_tried_first(tmp_path: Path) -> None:
    paths = [getattr(route, "path", None) for route in _routes(tmp_path)]

    assert paths[0] == HOT_PATHS[0]
    assert paths.index(HOT_PATHS[1]) == paths.count(HOT_PATHS[0])


def test_every_method_and_path_reaches_the_route_it_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each sample URL and method gets the same route (or 405) in both orders."""
    served = _routes(tmp_path)
    monkeypatch.setattr(asgi, "hot_first", list)
    declared = _routes(tmp_path)
    assert served != declared

    for path in _sample_paths(declared):
        for method in METHODS:
            scope: Scope = {"type": "http", "path": path, "method": method}
            assert _chosen(served, scope) == _chosen(declared, scope), (method, path)
