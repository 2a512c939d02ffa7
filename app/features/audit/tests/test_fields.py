"""What an event reads of a request: each named field that is text, else None."""

from types import MappingProxyType

from pydantic import BaseModel

from ..domain.fields import field_of, read_fields

NAMES = ("scope", "entity_id", "area", "name", "expected_version")


class Request(BaseModel):
    scope: str
    area: str
    name: int


def test_raw_fields_of_text_are_read_each_under_its_own_name() -> None:
    """HTTP's raw fields: every name read from its own key."""
    raw: dict[str, object] = {name: f"{name}-value" for name in NAMES}

    assert read_fields(raw) == {name: f"{name}-value" for name in NAMES}


def test_raw_fields_that_are_not_text_are_read_as_none() -> None:
    """A refused request's raw fields may hold any JSON: only text is recorded."""
    for name in NAMES:
        raw: dict[str, object] = {other: "text" for other in NAMES}
        raw[name] = 7

        assert read_fields(raw) == {n: None if n == name else "text" for n in NAMES}


def test_a_models_fields_are_read_as_text_or_none() -> None:
    """A model's text fields are read, one that is not text or is absent is None."""
    request = Request(scope="user", area="notes", name=3)

    assert read_fields(request) == {
        "scope": "user",
        "entity_id": None,
        "area": "notes",
        "name": None,
        "expected_version": None,
    }
    assert field_of({"name": 3, "area": "a"}, "name") is None


def test_a_mapping_that_is_not_a_dict_is_read_by_name() -> None:
    fields = MappingProxyType({"name": "tea", "area": 3})

    assert (field_of(fields, "name"), field_of(fields, "area")) == ("tea", None)
    assert field_of(fields, "scope") is None
