"""The client's models agree with the published OpenAPI document: each names the
same fields as its schema, with the same types, and requires the same ones."""

import json
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel
from wenchang_client import models

OPENAPI = Path(__file__).resolve().parents[3] / "openapi.json"

SCHEMAS: dict[str, type[BaseModel]] = {
    "MemoryFile": models.MemoryFile,
    "FileEntry": models.FileEntry,
    "CappedArea": models.CappedArea,
    "SearchHit": models.SearchHit,
    "FileChange": models.FileChange,
    "VersionEntry": models.VersionEntry,
    "AuditEventView": models.AuditEvent,
    "Webhook": models.Webhook,
    "Delivery": models.WebhookDelivery,
}
RESPONSES: dict[tuple[str, str], type[BaseModel]] = {
    ("/v1/index", "get"): models.MemoryIndex,
    ("/v1/files/{scope}", "get"): models.FileListing,
    ("/v1/search", "get"): models.SearchResults,
    ("/v1/changes", "get"): models.ChangesPage,
    ("/v1/audit", "get"): models.AuditEvents,
    ("/v1/webhooks/{scope}", "get"): models.Webhooks,
    ("/v1/webhooks/{scope}", "post"): models.WebhookCreated,
    ("/v1/webhooks/{scope}/{id}/enable", "post"): models.Webhook,
    ("/v1/files/{scope}/{area}/{name}/versions", "get"): models.VersionListing,
    ("/v1/files/{scope}/{area}/{name}/versions/{version}", "get"): models.FileVersion,
}


def _document() -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(OPENAPI.read_text()))


def _shape(schema: dict[str, Any]) -> object:
    """A schema's type, comparable across the server's and the client's."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        options = cast(list[dict[str, Any]], schema["anyOf"])
        return tuple(sorted(str(_shape(option)) for option in options))
    if schema.get("type") == "array":
        return ("array", _shape(cast(dict[str, Any], schema["items"])))
    return schema.get("type")


def _client_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema(ref_template="#/components/schemas/{model}")


def _names(shape: object) -> object:
    """Client refs name the client's classes; map them onto the server's names."""
    renamed = {model.__name__: name for name, model in SCHEMAS.items()}
    if isinstance(shape, str):
        return renamed.get(shape, shape)
    if isinstance(shape, tuple):
        return tuple(_names(part) for part in cast(tuple[object, ...], shape))
    return shape


def _compare(published: dict[str, Any], model: type[BaseModel]) -> None:
    ours = _client_schema(model)
    theirs_fields = cast(dict[str, dict[str, Any]], published["properties"])
    our_fields = cast(dict[str, dict[str, Any]], ours["properties"])
    assert set(our_fields) == set(theirs_fields), model.__name__
    assert set(ours.get("required", [])) == set(published.get("required", []))
    for field, schema in theirs_fields.items():
        assert _names(_shape(our_fields[field])) == _shape(schema), (model, field)


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_component_models_match_the_published_schemas(name: str) -> None:
    published = _document()["components"]["schemas"][name]
    _compare(published, SCHEMAS[name])


@pytest.mark.parametrize("where", list(RESPONSES), ids=str)
def test_answer_models_match_the_published_responses(where: tuple[str, str]) -> None:
    path, method = where
    responses = _document()["paths"][path][method]["responses"]
    answer = responses["200" if "200" in responses else "201"]
    published = answer["content"]["application/json"]["schema"]
    _compare(published, RESPONSES[where])
