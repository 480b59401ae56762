"""On-disk numeric codes: frame record types and the enums payloads store.

Payloads store enums as bare numbers. A stored number with no name here is
kept as a plain ``int`` by the decoders (see ``known``), never forced into a
member: upstream calls such values undefined, and a reader must not invent one.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import TypeVar

__all__ = [
    "AgentType",
    "ArchiveKind",
    "ArchiveRole",
    "ContentType",
    "GraphEdgeKind",
    "PlanStatusCode",
    "RecordType",
    "known",
]

_E = TypeVar("_E", bound=IntEnum)


class RecordType(IntEnum):
    """The frame type byte of each record kind (format 0x0012)."""

    PROFILE = 0x01
    SCENE_NODE = 0x02
    SCENE_EDGE = 0x03
    TOPIC = 0x04
    SCENE = 0x05
    GRAPH_NODE = 0x06
    GRAPH_EDGE = 0x07
    ARCHIVE = 0x08
    GRAPH_SLOT = 0x0B
    PLAN_NODE = 0x0F
    REGISTRY = 0x10


class ArchiveKind(IntEnum):
    UTTERANCE = 0
    EVENT = 1


class ArchiveRole(IntEnum):
    """Who produced an L4 utterance; DREAM marks the library's fused summary."""

    USER = 0
    AGENT = 1
    SYSTEM = 2
    DREAM = 3


class ContentType(IntEnum):
    TEXT = 0
    IMAGE = 1
    VIDEO = 2
    DOCUMENT = 3
    AUDIO = 4
    CODE = 5
    OTHER = 255


class GraphEdgeKind(IntEnum):
    RELATED = 0
    CAUSAL = 1
    PART_OF = 2
    SEQUENCE = 3
    DEPENDENCY = 4
    CUSTOM = 5


class PlanStatusCode(IntEnum):
    """A plan step's stored status; the facade speaks the words instead."""

    IN_PROGRESS = 0
    DONE = 1
    FAILED = 2


class AgentType(IntEnum):
    """The profile's ``agent_type``: the file's one primary or a sub agent."""

    PRIMARY = 0
    SUB = 1


# The members the turn's hot path compares with and stores, read once: on 3.11 a member
# read from its enum class goes through the enum metaclass's ``__getattr__`` hook (about
# four times a plain class attribute), and a turn read two dozen.
KIND_EVENT, KIND_UTTERANCE = ArchiveKind.EVENT, ArchiveKind.UTTERANCE
ROLE_USER, ROLE_AGENT, ROLE_DREAM = ArchiveRole.USER, ArchiveRole.AGENT, ArchiveRole.DREAM
TYPE_TEXT = ContentType.TEXT

_MEMBERS: dict[type[IntEnum], dict[int, IntEnum]] = {}


def members_of(enum: type[_E]) -> Mapping[int, int]:
    """``enum``'s code -> member table (shared: do not change it)."""
    members = _MEMBERS.get(enum)
    if members is None:
        # A lookup table per enum: calling the enum costs a miss's exception, and a
        # hit is several times a dict lookup (decoders call this per field).
        members = _MEMBERS[enum] = {int(m): m for m in enum}
    return members


def known(enum: type[_E], value: int) -> int:
    """Return ``value`` as its ``enum`` member when it has one, else unchanged."""
    return members_of(enum).get(value, value)
