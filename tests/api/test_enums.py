"""Public enums carry upstream's numbers and words (api.md §14)."""

from __future__ import annotations

from enum import Enum, IntEnum, StrEnum

import pytest

from memhop import records
from memhop.api import types


@pytest.mark.parametrize(
    ("enum", "base", "table"),
    [
        (types.ArchiveKind, IntEnum, {"UTTERANCE": 0, "EVENT": 1}),
        (types.ArchiveRole, IntEnum, {"USER": 0, "AGENT": 1, "SYSTEM": 2, "DREAM": 3}),
        (
            types.ContentType,
            IntEnum,
            {"TEXT": 0, "IMAGE": 1, "VIDEO": 2, "DOCUMENT": 3, "AUDIO": 4, "CODE": 5, "OTHER": 255},
        ),
        (
            types.GraphEdgeKind,
            IntEnum,
            {"RELATED": 0, "CAUSAL": 1, "PART_OF": 2, "SEQUENCE": 3, "DEPENDENCY": 4, "CUSTOM": 5},
        ),
        (
            types.PlanStatus,
            StrEnum,
            {"IN_PROGRESS": "in_progress", "DONE": "done", "FAILED": "failed"},
        ),
        (
            types.L3ImportMode,
            StrEnum,
            {"SKIP": "skip", "MERGE": "merge", "OVERWRITE": "overwrite"},
        ),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_enum_values_are_pinned(enum: type[Enum], base: type, table: dict[str, object]) -> None:
    assert issubclass(enum, base)
    assert {m.name: m.value for m in enum} == table


def test_numeric_words_are_the_lowercase_names() -> None:
    assert types.GraphEdgeKind.PART_OF.name.lower() == "part_of"
    assert types.ArchiveKind(1).name.lower() == "event"


def test_a_stored_enum_is_already_a_public_member() -> None:
    """The records decode into the very classes the facade exports."""
    assert types.ArchiveRole is records.ArchiveRole
    assert types.ContentType is records.ContentType


def test_plain_values_compare_equal_to_members() -> None:
    assert types.PlanStatus("done") == "done"
    assert types.ContentType.OTHER == 255
    with pytest.raises(ValueError, match="6"):
        types.ContentType(6)
