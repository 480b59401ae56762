"""Every tool schema holds to OpenAI strict function calling, and every parameter is described."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from memhop import tools
from memhop.tools import schema, table

# The keywords strict mode accepts on a schema (OpenAI structured outputs, "supported schemas").
ALLOWED_KEYS = {"type", "properties", "required", "additionalProperties", "items", "enum"}
ALLOWED_KEYS |= {"anyOf", "description"}
TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}
MAX_DEPTH = 10  # strict mode allows up to 10 levels of nesting


def strict_problems(node: Any, where: str = "$", depth: int = 0) -> list[str]:
    """What keeps ``node`` from being a strict-mode schema (empty: it is one)."""
    if not isinstance(node, dict):
        return [f"{where}: not a schema object"]
    problems = [f"{where}: keyword {k!r}" for k in node if k not in ALLOWED_KEYS]
    if depth > MAX_DEPTH:
        problems.append(f"{where}: nested deeper than {MAX_DEPTH}")
    if "anyOf" in node:
        for i, option in enumerate(node["anyOf"]):
            problems += strict_problems(option, f"{where}.anyOf[{i}]", depth)
        return problems
    kinds = node.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if not kinds or not set(kinds) <= TYPES:
        problems.append(f"{where}: type {node.get('type')!r}")
    if "enum" in node:
        allowed = {"string": str, "integer": int, "null": type(None)}
        for value in node["enum"]:
            if not any(isinstance(value, allowed.get(k, ())) for k in kinds):
                problems.append(f"{where}: enum value {value!r} is not of type {kinds}")
    if "object" in kinds:
        props = node.get("properties")
        if not isinstance(props, dict):
            problems.append(f"{where}: an object without properties")
            props = {}
        if node.get("additionalProperties") is not False:
            problems.append(f"{where}: an object not closed by additionalProperties: false")
        if node.get("required") != list(props):
            problems.append(f"{where}: required is not every property")
        for name, sub in props.items():
            problems += strict_problems(sub, f"{where}.{name}", depth + 1)
    if "array" in kinds:
        problems += strict_problems(node.get("items"), f"{where}[]", depth + 1)
    return problems


def descriptions_missing(node: dict[str, Any], where: str = "$") -> list[str]:
    """Every property, at every depth, carries a non-empty description."""
    missing = []
    for option in node.get("anyOf", []):
        missing += descriptions_missing(option, where)
    for name, sub in node.get("properties", {}).items():
        if not str(sub.get("description", "")).strip():
            missing.append(f"{where}.{name}")
        missing += descriptions_missing(sub, f"{where}.{name}")
    if isinstance(node.get("items"), dict):
        missing += descriptions_missing(node["items"], f"{where}[]")
    return missing


@pytest.mark.parametrize("definition", tools.schemas(), ids=lambda d: d["function"]["name"])
def test_every_schema_is_strict_mode_valid(definition: dict[str, Any]) -> None:
    fn = definition["function"]
    assert fn["strict"] is True
    params = fn["parameters"]
    assert params["type"] == "object"  # the root is an object, never a union
    assert strict_problems(params) == []
    jsonschema.Draft202012Validator.check_schema(params)
    assert descriptions_missing(params) == []


def test_the_strict_checker_catches_what_it_looks_for() -> None:
    """Positive control for the checker: each rule, broken once, is reported."""
    params = next(
        d["function"]["parameters"]
        for d in tools.schemas()
        if d["function"]["name"] == "memory_graph_import"
    )
    assert strict_problems(params) == []
    broken = [
        ("additionalProperties", lambda s: s.pop("additionalProperties")),
        ("required", lambda s: s["required"].pop()),
        ("keyword 'default'", lambda s: s["properties"]["mode"].update(default="skip")),
        ("enum value", lambda s: s["properties"]["mode"]["enum"].append(3)),
        ("required", lambda s: s["properties"]["items"]["items"].pop("required")),
    ]
    for fragment, damage in broken:
        copied = copy.deepcopy(params)
        damage(copied)
        problems = strict_problems(copied)
        assert any(fragment in p for p in problems), (fragment, problems)
    undescribed = copy.deepcopy(params)
    del undescribed["properties"]["items"]["items"]["properties"]["title"]["description"]
    assert descriptions_missing(undescribed) == ["$.items[].title"]


def test_every_description_in_the_table_belongs_to_a_parameter() -> None:
    """No stale entry: the table describes exactly the parameters the methods take."""
    assert schema.described_keys() == set(table.PARAMS)
    assert all(text.strip() for text in table.PARAMS.values())


def test_a_parameter_without_a_description_stops_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The builder refuses to emit an undescribed parameter rather than leave it bare."""
    assert tools.schemas()  # control: the real table builds
    trimmed = dict(table.PARAMS)
    del trimmed["input"]
    monkeypatch.setattr(table, "PARAMS", trimmed)
    monkeypatch.setattr(schema, "PARAMS", trimmed)
    with pytest.raises(LookupError, match="input"):
        tools.schemas()
