"""OpenTelemetry traces and metrics for HTTP, MCP tool calls and tasks.

Off unless the standard ``OTEL_*`` variables ask for an exporter (and the
``wenchang[otel]`` extra is installed). Tenchi's own observers give a span and
duration per HTTP request and per use case (tasks included); on top of them
Wenchang records, with bounded attributes only (never content, tokens or ids):

- ``wenchang.operation.duration`` (s): per operation and surface;
- ``wenchang.errors``: refusals by code and surface;
- ``wenchang.conflicts``: version conflicts by surface;
- ``wenchang.rate_limited``: rate-limit refusals by surface;
- a ``wenchang.mcp <tool>`` span per MCP tool call.
"""

from collections.abc import Mapping, Sequence

from opentelemetry import metrics, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Status, StatusCode, TracerProvider
from tenchi.execution import UseCaseObserver, UseCaseOutcome
from tenchi.opentelemetry import create_opentelemetry_observers
from tenchi.server import OutcomeObserver, RequestOutcome

from app.server.mcp.telemetry import ToolCallRecord

CONFLICT_CODES = frozenset({"VERSION_CONFLICT"})
SCOPE = "wenchang"


class Telemetry:
    """The instruments and the observers that feed them."""

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self._tenchi = create_opentelemetry_observers(
            tracer_provider=tracer_provider, meter_provider=meter_provider
        )
        self._tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self._duration = meter.create_histogram(
            "wenchang.operation.duration",
            unit="s",
            description="Duration of memory operations, per operation and surface.",
        )
        self._errors = meter.create_counter(
            "wenchang.errors", unit="{error}", description="Refusals by code."
        )
        self._conflicts = meter.create_counter(
            "wenchang.conflicts", unit="{conflict}", description="Version conflicts."
        )
        self._rate_limited = meter.create_counter(
            "wenchang.rate_limited",
            unit="{request}",
            description="Requests refused by the rate limiter.",
        )

    @property
    def request_observers(self) -> Sequence[OutcomeObserver]:
        return (self._tenchi.request, self.observe_request)

    @property
    def use_case_observers(self) -> Sequence[UseCaseObserver]:
        return (self._tenchi.use_case, self.observe_use_case)

    def observe_request(self, outcome: RequestOutcome) -> None:
        operation = outcome.request.contract.name
        self._duration.record(
            outcome.duration_seconds,
            {"operation": operation, "surface": "http", "status": outcome.status_code},
        )

    def observe_use_case(self, outcome: UseCaseOutcome) -> None:
        # HTTP refusals are counted once, by observe_refusal; tools by their record.
        if outcome.entrypoint != "task":
            return
        operation = getattr(outcome.use_case, "__name__", "task")
        attributes = {"operation": operation, "surface": "task"}
        self._duration.record(outcome.duration_seconds, attributes)
        if outcome.error_code is not None:
            self.observe_refusal(outcome.error_code, surface="task")

    def observe_tool_call(self, record: ToolCallRecord) -> None:
        attributes: dict[str, str] = {"operation": record.tool, "surface": "mcp"}
        self._duration.record(record.duration_s, attributes)
        with self._tracer.start_as_current_span(f"wenchang.mcp {record.tool}") as span:
            span.set_attribute("wenchang.operation", record.tool)
            if record.is_error:
                code = record.error_code or "failed"
                span.set_attribute("wenchang.error.code", code)
                span.set_status(Status(StatusCode.ERROR, code))
                self.observe_refusal(code, surface="mcp")

    def observe_refusal(self, code: str, *, surface: str = "http") -> None:
        attributes = {"code": code, "surface": surface}
        self._errors.add(1, attributes)
        if code in CONFLICT_CODES:
            self._conflicts.add(1, {"surface": surface})
        if code == "RATE_LIMITED":
            self._rate_limited.add(1, {"surface": surface})


EXPORTER_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
)


def is_configured(environ: Mapping[str, str]) -> bool:
    """True when OTEL_* variables ask for an exporter and the SDK is not disabled."""
    if environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    return any(environ.get(name) for name in EXPORTER_VARIABLES)


def telemetry_from_environment(environ: Mapping[str, str]) -> Telemetry | None:
    """Telemetry exporting where the OTEL_* variables say, or None when unset."""
    if not is_configured(environ):
        return None
    from app.server.otel_sdk import configured_providers

    tracer_provider, meter_provider = configured_providers(environ)
    return Telemetry(tracer_provider=tracer_provider, meter_provider=meter_provider)
