"""LangGraph's namespace match conditions and value filters, as ``InMemoryStore``
applies them (JSON-like equality, ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``,
``$lte``)."""

from collections.abc import Iterable
from typing import Any, cast

from langgraph.store.base import MatchCondition


def does_match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    return all(wanted == "*" or label == wanted for label, wanted in pairs)


def matches(value: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(_compare(value.get(key), expected) for key, expected in wanted.items())


def _compare(actual: Any, expected: Any) -> bool:
    """JSON-like comparison, with LangGraph's ``$eq``/``$ne``/``$gt``… operators."""
    if isinstance(expected, dict):
        wanted = cast(dict[str, Any], expected)
        if any(key.startswith("$") for key in wanted):
            return all(_operator(actual, op, v) for op, v in wanted.items())
        if not isinstance(actual, dict):
            return False
        held = cast(dict[str, Any], actual)
        return all(_compare(held.get(k), v) for k, v in wanted.items())
    if isinstance(expected, (list, tuple)):
        items = list(cast(Iterable[Any], expected))
        if not isinstance(actual, (list, tuple)):
            return False
        given = list(cast(Iterable[Any], actual))
        return len(given) == len(items) and all(
            _compare(a, e) for a, e in zip(given, items, strict=False)
        )
    return actual == expected


def _operator(actual: Any, operator: str, operand: Any) -> bool:
    comparisons = {
        "$eq": lambda: actual == operand,
        "$ne": lambda: actual != operand,
        "$gt": lambda: float(actual) > float(operand),
        "$gte": lambda: float(actual) >= float(operand),
        "$lt": lambda: float(actual) < float(operand),
        "$lte": lambda: float(actual) <= float(operand),
    }
    if operator not in comparisons:
        raise ValueError(f"Unsupported operator: {operator}")
    return comparisons[operator]()
