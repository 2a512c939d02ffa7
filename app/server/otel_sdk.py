"""The OpenTelemetry SDK, set up from the standard ``OTEL_*`` variables.

Needs the ``wenchang[otel]`` extra. ``OTEL_TRACES_EXPORTER`` and
``OTEL_METRICS_EXPORTER`` choose ``otlp`` (the default: OTLP over HTTP/protobuf,
configured by ``OTEL_EXPORTER_OTLP_*``), ``console`` or ``none``; the SDK reads
the rest (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_METRIC_EXPORT_INTERVAL``, …) itself.
"""

from collections.abc import Mapping

from app.server.settings import SettingsError

try:
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
        OTLPMetricExporter,
    )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter,
    )
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        MetricExporter,
        PeriodicExportingMetricReader,
    )
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )
except ImportError as exc:
    raise SettingsError(
        "OTEL_* variables ask for telemetry but the OpenTelemetry SDK is not "
        "installed: install the extra, e.g. `uv sync --extra otel` or "
        "`pip install 'wenchang[otel]'`, or unset the OTEL_* variables"
    ) from exc

EXPORTERS = ("otlp", "console", "none")


def exporter_name(environ: Mapping[str, str], variable: str) -> str:
    name = environ.get(variable, "otlp").strip().lower() or "otlp"
    if name not in EXPORTERS:
        raise SettingsError(
            f"{variable}={name!r} is not supported; use one of {', '.join(EXPORTERS)}"
        )
    return name


def span_exporter(name: str) -> SpanExporter | None:
    return {"otlp": OTLPSpanExporter, "console": ConsoleSpanExporter}.get(
        name, lambda: None
    )()


def metric_exporter(name: str) -> MetricExporter | None:
    return {"otlp": OTLPMetricExporter, "console": ConsoleMetricExporter}.get(
        name, lambda: None
    )()


def configured_providers(
    environ: Mapping[str, str],
) -> tuple[TracerProvider, MeterProvider]:
    """Providers exporting where the variables say; ``service.name`` is wenchang."""
    named = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": "wenchang"}
    resource = Resource.create(named)
    tracer_provider = TracerProvider(resource=resource)
    spans = span_exporter(exporter_name(environ, "OTEL_TRACES_EXPORTER"))
    if spans is not None:
        tracer_provider.add_span_processor(BatchSpanProcessor(spans))
    exported = metric_exporter(exporter_name(environ, "OTEL_METRICS_EXPORTER"))
    readers = [PeriodicExportingMetricReader(exported)] if exported else []
    return tracer_provider, MeterProvider(resource=resource, metric_readers=readers)
