"""L0 profile payload (type 0x01): who the agent is, one per domain.

The MBTI four-letter type is never stored; ``MBTIScore.type`` derives it from
the axes on every read, so a stale or model-supplied word cannot leak through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar, Self

from memhop.frozen import quick_init
from memhop.records.codes import AgentType, RecordType, known
from memhop.records.gojson import ObjectWriter
from memhop.records.goread import FieldReader, read_object
from memhop.render.shape import Result

__all__ = ["EmotionScore", "MBTIScore", "ProfileSlot", "derive_mbti_type"]


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class EmotionScore(Result):
    """Distilled emotional state, each signal in [0, 1]; 0 is an extreme reading."""

    valence: float = 0.0
    arousal: float = 0.0
    dominance: float = 0.0

    def _writer(self, type_name: str) -> ObjectWriter:
        w = ObjectWriter(type_name)
        w.f64("valence", self.valence)
        w.f64("arousal", self.arousal)
        w.f64("dominance", self.dominance)
        return w

    @classmethod
    def _read(cls, r: FieldReader) -> Self:
        return cls(valence=r.f64("valence"), arousal=r.f64("arousal"), dominance=r.f64("dominance"))


@quick_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MBTIScore(Result):
    """Distilled MBTI axes, each in [-1, 1]; negative leans I, N, T, J."""

    i_e: float = 0.0
    n_s: float = 0.0
    t_f: float = 0.0
    j_p: float = 0.0

    @property
    def type(self) -> str:
        """The four-letter word of the axes: "" when all are 0, "X" for a 0 axis."""
        return derive_mbti_type(self)

    def _writer(self, type_name: str) -> ObjectWriter:
        w = ObjectWriter(type_name)
        w.f64("i_e", self.i_e)
        w.f64("n_s", self.n_s)
        w.f64("t_f", self.t_f)
        w.f64("j_p", self.j_p)
        return w

    @classmethod
    def _read(cls, r: FieldReader) -> Self:
        return cls(i_e=r.f64("i_e"), n_s=r.f64("n_s"), t_f=r.f64("t_f"), j_p=r.f64("j_p"))


def derive_mbti_type(score: MBTIScore) -> str:
    """Return the MBTI word for ``score``: "" when all axes are 0, "X" for a 0 axis."""
    axes = (
        (score.i_e, "I", "E"),
        (score.n_s, "N", "S"),
        (score.t_f, "T", "F"),
        (score.j_p, "J", "P"),
    )
    if all(value == 0 for value, _, _ in axes):
        return ""
    return "".join("X" if v == 0 else low if v < 0 else high for v, low, high in axes)


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileSlot(Result):
    """A domain's L0 profile: the host's fields, Dream's distillation and the library's stamps.

    Name, role, personality and preferences are the host's; emotion, MBTI and a
    refined personality come from Dream; ``agent_type`` (0 primary, 1 sub-agent)
    and the stamp from the library. ``preferences`` is held as a read-only
    mapping and is left out of the hash. The record and the public result are
    this one class (its record id is always ``ids.profile_id()``).
    """

    RECORD_TYPE: ClassVar[RecordType] = RecordType.PROFILE

    name: str = ""
    role: str = ""
    personality: str = ""
    emotion_state: EmotionScore = EmotionScore()
    mbti: MBTIScore = MBTIScore()
    preferences: Mapping[str, str] = field(default_factory=dict, hash=False)
    agent_type: int = AgentType.PRIMARY
    updated_at_ms: int = 0

    def __post_init__(self) -> None:
        # A private copy, so the caller's dict cannot change a frozen record.
        object.__setattr__(self, "preferences", MappingProxyType(dict(self.preferences)))

    def to_json(self) -> bytes:
        """The record's payload as upstream writes it (Go's JSON, format 0x0012)."""
        w = ObjectWriter("ProfileSlot")
        w.string("name", self.name)
        w.string("role", self.role)
        w.string("personality", self.personality)
        w.nested("emotion_state", self.emotion_state._writer("ProfileSlot"))
        w.nested("mbti", self.mbti._writer("ProfileSlot"))
        w.str_map("preferences", self.preferences)
        w.u8("agent_type", self.agent_type)
        w.i64("updated_at_ms", self.updated_at_ms)
        return w.to_bytes()

    @classmethod
    def from_json(cls, data: bytes) -> Self:
        """The profile a stored payload holds (read as Go reads it)."""
        r = read_object(data, "ProfileSlot")
        return cls(
            name=r.string("name"),
            role=r.string("role"),
            personality=r.string("personality"),
            emotion_state=EmotionScore._read(r.nested("emotion_state", "EmotionScore")),
            mbti=MBTIScore._read(r.nested("mbti", "MBTIScore")),
            preferences=r.str_map("preferences"),
            agent_type=known(AgentType, r.u8("agent_type")),
            updated_at_ms=r.i64("updated_at_ms"),
        )
