"""OpenTelemetry: spans and metrics for HTTP, MCP tool calls and tasks, and JSON logs.

Every test reads what the OTel SDK's in-memory exporters received from the real
app, the real MCP server on loopback, or the composed task runner.
"""

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from tenchi.testing import open_http

from app.features.memory.schemas import ExportMemory
from app.infra.tokens.token_file import create_token
from app.server.asgi import build_app
from app.server.http.request_log import JsonLines, current_request_id
from app.server.otel import Telemetry, is_configured, telemetry_from_environment
from app.server.settings import Settings
from app.server.tasks import build_task_runner
from app.shared.identity import Grant
from tests.http_support import FILE, bearer, file_body
from tests.mcp_support import http_session, serve


@dataclass(frozen=True)
class Exported:
    telemetry: Telemetry
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader

    def points(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(attributes, data point) of every data point of metric ``name``."""
        data = self.metrics.get_metrics_data()
        exported: dict[str, Any] = json.loads(data.to_json()) if data else {}
        return [
            (point["attributes"], point)
            for resource in exported.get("resource_metrics", [])
            for scope in resource["scope_metrics"]
            for metric in scope["metrics"]
            if metric["name"] == name
            for point in metric["data"]["data_points"]
        ]

    def span_names(self) -> list[str]:
        return [span.name for span in self.spans.get_finished_spans()]


@pytest.fixture
def exported() -> Iterator[Exported]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    telemetry = Telemetry(
        tracer_provider=tracer_provider, meter_provider=meter_provider
    )
    yield Exported(telemetry, spans, reader)
    tracer_provider.shutdown()
    meter_provider.shutdown()


def settings_for(tmp_path: Path, **values: Any) -> Settings:
    return Settings(
        storage="memory://",
        tokens_file=str(tmp_path / "tokens.json"),
        index_cache="none",
        **values,
    )


def alice(tmp_path: Path) -> dict[str, str]:
    secret, _ = create_token(
        tmp_path / "tokens.json", {"user": Grant("alice", "owner")}
    )
    return bearer(secret)


async def test_http_operations_record_latency_errors_and_conflicts(
    tmp_path: Path, exported: Exported
) -> None:
    """A write, a stale write and a 404 show up as duration, conflict and errors."""
    headers = alice(tmp_path)
    app = build_app(settings_for(tmp_path), telemetry=exported.telemetry)
    async with open_http(app) as http:
        await http.put(FILE, json=file_body(), headers=headers | {"If-None-Match": "*"})
        await http.put(FILE, json=file_body(), headers=headers | {"If-Match": '"0"'})
        await http.get("/v1/nothing-here", headers=headers)

    durations = {
        attrs["operation"]
        for attrs, _ in exported.points("wenchang.operation.duration")
    }
    errors = {
        attrs["code"]: point["value"]
        for attrs, point in exported.points("wenchang.errors")
    }
    conflicts = exported.points("wenchang.conflicts")
    assert any("write" in operation or "put" in operation for operation in durations)
    assert errors == {"VERSION_CONFLICT": 1, "NOT_FOUND": 1}
    assert [(attrs, point["value"]) for attrs, point in conflicts] == [
        ({"surface": "http"}, 1)
    ]
    assert exported.span_names()


async def test_rate_limit_refusals_are_counted(
    tmp_path: Path, exported: Exported
) -> None:
    """Each 429 adds one to wenchang.rate_limited."""
    headers = alice(tmp_path)
    app = build_app(settings_for(tmp_path, rate_limit=1), telemetry=exported.telemetry)
    async with open_http(app) as http:
        for _ in range(3):
            await http.get("/v1/index", headers=headers)

    (limited,) = exported.points("wenchang.rate_limited")
    assert limited[0] == {"surface": "http"}
    assert limited[1]["value"] == 2


async def test_mcp_tool_calls_get_a_span_and_a_duration(
    tmp_path: Path, exported: Exported
) -> None:
    """A tool call over streamable HTTP is traced and timed under its tool name."""
    secret, _ = create_token(
        tmp_path / "tokens.json", {"user": Grant("alice", "owner")}
    )
    app = build_app(settings_for(tmp_path), telemetry=exported.telemetry)

    with serve(app) as url:
        async with http_session(url, secret) as session:
            await session.call_tool("get_memory_index", {})
            await session.call_tool(
                "read_file", {"scope": "user", "area": "notes", "name": "absent"}
            )

    assert "wenchang.mcp get_memory_index" in exported.span_names()
    durations = exported.points("wenchang.operation.duration")
    assert ({"operation": "read_file", "surface": "mcp"}) in [a for a, _ in durations]
    errors = exported.points("wenchang.errors")
    assert [(a, p["value"]) for a, p in errors] == [
        ({"code": "MEMORY_NOT_FOUND", "surface": "mcp"}, 1)
    ]


async def test_tasks_are_traced_and_timed(tmp_path: Path, exported: Exported) -> None:
    """An operator task records its duration under the task surface."""
    runner = build_task_runner(settings_for(tmp_path), telemetry=exported.telemetry)

    await runner.run(
        "memory.export", input=ExportMemory(scope="user", entity_id="alice")
    )

    durations = exported.points("wenchang.operation.duration")
    assert [a["surface"] for a, _ in durations] == ["task"]
    assert any(name.startswith("tenchi.use_case") for name in exported.span_names())


def test_telemetry_is_off_unless_otel_variables_ask_for_it() -> None:
    """No OTEL_* exporter variable: no telemetry; OTEL_SDK_DISABLED wins."""
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}

    assert telemetry_from_environment({}) is None
    assert not is_configured({"OTEL_SERVICE_NAME": "x"})
    assert is_configured(endpoint)
    assert not is_configured(endpoint | {"OTEL_SDK_DISABLED": "true"})
    assert (
        telemetry_from_environment(
            {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}
        )
        is not None
    )


async def test_json_logs_carry_the_request_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every line logged while a request runs names that request's id."""
    seen: list[str | None] = []

    class Spy(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(json.loads(JsonLines().format(record))["request_id"])

    spy = Spy()
    caplog.set_level(logging.INFO, logger="wenchang.mcp")
    logging.getLogger("wenchang.mcp").addHandler(spy)
    secret, _ = create_token(
        tmp_path / "tokens.json", {"user": Grant("alice", "owner")}
    )
    try:
        with serve(build_app(settings_for(tmp_path))) as url:
            async with http_session(url, secret) as session:
                await session.call_tool("get_memory_index", {})
    finally:
        logging.getLogger("wenchang.mcp").removeHandler(spy)

    assert seen and all(isinstance(value, str) and value for value in seen)
    assert current_request_id.get() is None


async def test_a_request_keeps_the_callers_request_id(tmp_path: Path) -> None:
    """An inbound x-request-id is the id of the request, end to end."""
    app = build_app(settings_for(tmp_path))
    async with open_http(app) as http:
        response = await http.get("/v1/index", headers={"x-request-id": "trace-7"})

    assert response.headers["x-request-id"] == "trace-7"
    assert response.json()["request_id"] == "trace-7"
    assert isinstance(response, httpx.Response)
