"""L0 profile: one ``ProfileSlot`` per domain at ``ids.profile_id()``.

The record has two writers. The host owns name, role, personality and
preferences (written whole by ``with_host_half``); Dream owns the emotion and
MBTI axes and refines the personality (``with_distilled``). The library stamps
``updated_at_ms`` and keeps ``agent_type`` from the stored record.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from memhop.engine import Engine
from memhop.ids import profile_id
from memhop.layers import codec
from memhop.records import AgentType, EmotionScore, MBTIScore, ProfileSlot

__all__ = [
    "DISTILL_DEFAULT_NAME",
    "DISTILL_DEFAULT_ROLE",
    "get_profile",
    "has_profile",
    "profile_or_empty",
    "put_profile",
    "with_distilled",
    "with_host_half",
]

# Dream's write-back starts from this when a domain has no profile yet (dream.md §4.8).
DISTILL_DEFAULT_NAME = "Agent"
DISTILL_DEFAULT_ROLE = "assistant"


def get_profile(engine: Engine, agent_id: int) -> ProfileSlot | None:
    """Return the domain's profile, None when absent; an unreadable one raises with its code."""
    return codec.read_optional(engine, agent_id, profile_id(), ProfileSlot)


def has_profile(engine: Engine, agent_id: int) -> bool:
    """True when the domain holds a profile, readable or damaged (a damaged one is kept)."""
    try:
        return get_profile(engine, agent_id) is not None
    except codec.DAMAGE:
        return True


def profile_or_empty(engine: Engine, agent_id: int) -> ProfileSlot:
    """The profile as a read that shows it beside other records sees it.

    Empty when absent or damaged (the engine counted the damage): a rotten
    profile must not take the turn loop down with it.
    """
    try:
        return get_profile(engine, agent_id) or ProfileSlot()
    except codec.DAMAGE:
        return ProfileSlot()


def put_profile(engine: Engine, agent_id: int, profile: ProfileSlot) -> None:
    """Write (or overwrite) the domain's profile durably."""
    codec.write(engine, agent_id, profile_id(), profile)


def with_host_half(
    stored: ProfileSlot | None,
    *,
    name: str,
    role: str,
    personality: str,
    preferences: Mapping[str, str],
    updated_at_ms: int,
    agent_type: int = AgentType.PRIMARY,
) -> ProfileSlot:
    """Return ``stored`` with the host half replaced whole (api.md §7.2).

    Emotion, MBTI and agent type are inherited from ``stored``; ``agent_type``
    is used only when nothing is stored. Personality is not inherited: the
    host's value (even "") replaces the distilled one. Validation of the name
    is the caller's.
    """
    base = stored if stored is not None else ProfileSlot(agent_type=agent_type)
    return dataclasses.replace(
        base,
        name=name,
        role=role,
        personality=personality,
        preferences=preferences,
        updated_at_ms=updated_at_ms,
    )


def with_distilled(
    stored: ProfileSlot | None,
    *,
    emotion: EmotionScore,
    mbti: MBTIScore,
    personality: str,
    updated_at_ms: int,
) -> ProfileSlot:
    """Return ``stored`` with Dream's distillation applied (dream.md §4.8).

    Emotion and MBTI are overwritten; personality only when the distilled one is
    non-empty. Name, role, preferences and agent type are left alone; a missing
    profile starts from name "Agent", role "assistant".
    """
    base = (
        stored
        if stored is not None
        else ProfileSlot(name=DISTILL_DEFAULT_NAME, role=DISTILL_DEFAULT_ROLE)
    )
    return dataclasses.replace(
        base,
        emotion_state=emotion,
        mbti=mbti,
        personality=personality if personality else base.personality,
        updated_at_ms=updated_at_ms,
    )
