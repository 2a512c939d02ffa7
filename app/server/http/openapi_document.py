"""The published OpenAPI document: the contract snapshot plus what a reader needs.

``openapi.json`` in the repository is Tenchi's snapshot of the contracts (``tenchi
openapi --check`` compares it byte for byte). The document ``/openapi.json``
serves, and ``wenchang openapi`` prints, is that snapshot plus the licence and a
relative server, which a standard linter asks for and which name no deployment.
"""

import json
from collections.abc import Mapping
from typing import Any, cast

from pydantic import JsonValue
from tenchi.contracts import contract
from tenchi.openapi import openapi_schema
from tenchi.routes import Route, RouteGroup, route

LICENSE: JsonValue = {"name": "Apache-2.0", "identifier": "Apache-2.0"}
SERVERS: JsonValue = [
    {"url": "/", "description": "The server that serves this document."}
]


def published(document: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    """``document`` with the licence and the relative server added."""
    info: JsonValue = {
        **cast(dict[str, JsonValue], document["info"]),
        "license": LICENSE,
    }
    return {**document, "info": info, "servers": SERVERS}


def published_document(
    routes: RouteGroup,
    *,
    title: str,
    version: str,
    description: str,
    security: Mapping[str, Mapping[str, str]],
) -> dict[str, JsonValue]:
    """The published document of ``routes``, built once at composition."""
    return published(
        openapi_schema(
            routes,
            title=title,
            version=version,
            description=description,
            security=security,
        )
    )


def published_openapi_route(document: Mapping[str, JsonValue]) -> Route:
    """``GET /openapi.json``, public: ``document`` as it is."""

    async def get_openapi(context: object) -> dict[str, Any]:
        return dict(document)

    declared = contract(
        method="GET",
        path="/openapi.json",
        response=dict[str, Any],
        tags=("docs",),
        public=True,
    )
    return route(declared, get_openapi)


def render(document: Mapping[str, JsonValue]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
