"""Agent-registry payload (type 0x10): a sub agent's name as a bare JSON string.

The record sits in the sub agent's own domain with id hash = agent id. An
empty name, like an unreadable one, leaves the domain unresolved; deciding
that is the registry layer's job, not the codec's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from memhop.frozen import quick_init
from memhop.records.codes import RecordType
from memhop.records.gojson import quote_string
from memhop.records.goread import read_string

__all__ = ["RegistryName"]


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RegistryName:
    """A sub agent's tenant name, fixed at creation."""

    RECORD_TYPE: ClassVar[RecordType] = RecordType.REGISTRY

    name: str

    def to_json(self) -> bytes:
        return quote_string(self.name).encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        return cls(name=read_string(data, "RegistryName"))
