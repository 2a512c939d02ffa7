"""Served tools' results are not re-checked against their JSON Schema on every call.

Tenchi validates a tool's result with pydantic, dumps it with the declared
model's serializer, and then validates the dump again against the model's JSON
Schema with the pure-Python `jsonschema` package: on a 500-entry index, several
times the cost of building the index, to prove what the model's own serializer
guarantees.
Tenchi 0.19 offers no switch for it, so each served tool gets a result validator
that accepts what its model produced (a missing field fails at startup, not
silently). The published output schema is enforced where it belongs, in the
tests: the MCP client checks every successful result of the MCP suites against
the schema `tools/list` publishes, and the envelope walk checks the failures.
"""

from app.server.declarations import AnyTool

RESULT_VALIDATOR_FIELD = "_result_schema_validator"


class ModelSerialised:
    """Stands in for the result's JSON-Schema validator: the model made the value."""

    def validate(self, instance: object) -> None:
        del instance


def trusting_results[T: AnyTool](declaration: T) -> T:
    """`declaration`, its per-call result re-check replaced by trust in its model."""
    if not hasattr(declaration, RESULT_VALIDATOR_FIELD):
        raise RuntimeError(f"Tenchi's Tool has no {RESULT_VALIDATOR_FIELD} to replace")
    object.__setattr__(declaration, RESULT_VALIDATOR_FIELD, ModelSerialised())
    return declaration
