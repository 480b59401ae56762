"""L0 profile primitives over a real engine file."""

from __future__ import annotations

import pytest

from memhop.engine import RECORD_HEADER_SIZE, Engine, open_engine
from memhop.errors import Code, CRCMismatchError, DeserializationError, NotFoundError
from memhop.ids import SHARED_POOL_AGENT_ID, profile_id
from memhop.layers import profile
from memhop.records import (
    AgentType,
    EmotionScore,
    MBTIScore,
    ProfileSlot,
    RecordType,
    SceneSlot,
)
from tests.faults import flip_byte, reopen

SUB = 0x1122334455667788
OTHER = 0x0A0B0C0D0E0F1011


def _rich_profile() -> ProfileSlot:
    return ProfileSlot(
        name="Ada",
        role="planner",
        personality="calm, precise",
        emotion_state=EmotionScore(valence=0.7, arousal=0.2, dominance=0.5),
        mbti=MBTIScore(i_e=-0.5, n_s=0.25, t_f=-1.0, j_p=0.0),
        preferences={"lang": "中文", "tone": "dry"},
        agent_type=AgentType.PRIMARY,
        updated_at_ms=1_700_000_000_123,
    )


def test_profile_round_trips_through_reopen_per_domain(engine: Engine) -> None:
    """Each domain keeps its own profile at the same id, and both survive a reopen."""
    primary = _rich_profile()
    sub = ProfileSlot(name="worker", agent_type=AgentType.SUB, updated_at_ms=5)
    profile.put_profile(engine, 0, primary)
    profile.put_profile(engine, SUB, sub)
    engine = reopen(engine)
    try:
        assert profile.get_profile(engine, 0) == primary
        assert profile.get_profile(engine, SUB) == sub
        got = profile.get_profile(engine, 0)
        assert got is not None
        assert got.mbti.type == "ISTX"  # derived on read, never stored
        assert profile.has_profile(engine, 0)
        assert profile.has_profile(engine, SUB)
    finally:
        engine.close()


def test_absent_profile_is_none_but_an_unreadable_one_raises(engine: Engine) -> None:
    """A byte flip in the payload is CRCMismatchError, never absent; an absent one is None."""
    profile.put_profile(engine, 0, _rich_profile())
    profile.put_profile(engine, SUB, ProfileSlot(name="healthy"))
    offset = engine.offset_of(0, profile_id())
    assert offset is not None
    engine.close()
    flip_byte(engine.path, offset + RECORD_HEADER_SIZE + 3)
    reopened = open_engine(engine.path)
    try:
        with pytest.raises(CRCMismatchError) as info:
            profile.get_profile(reopened, 0)
        assert not isinstance(info.value, NotFoundError)
        assert info.value.code == Code.CRC_MISMATCH
        # A damaged profile is still a profile: it is not seeded over (the open goes on).
        assert profile.has_profile(reopened, 0)
        # Positive controls in the same file: absent reads None, a healthy one reads.
        assert profile.get_profile(reopened, OTHER) is None
        assert not profile.has_profile(reopened, OTHER)
        assert profile.get_profile(reopened, SUB) == ProfileSlot(name="healthy")
    finally:
        reopened.close()


def test_undecodable_profile_is_a_deserialization_error(engine: Engine) -> None:
    """A well-framed 0x01 record that is not a profile raises 5007, not "absent"."""
    engine.write(0, RecordType.PROFILE, profile_id(), b"not json")
    with pytest.raises(DeserializationError) as info:
        profile.get_profile(engine, 0)
    assert info.value.code == Code.DESERIALIZATION
    profile.put_profile(engine, 0, ProfileSlot(name="fixed"))  # positive control
    assert profile.get_profile(engine, 0) == ProfileSlot(name="fixed")


def test_a_record_of_another_type_at_the_profile_id_reads_as_absent(engine: Engine) -> None:
    """One id, one type: a scene sitting at the profile id is not a profile."""
    engine.write(0, RecordType.SCENE, profile_id(), SceneSlot(scene_id=1).to_json())
    assert profile.get_profile(engine, 0) is None
    assert not profile.has_profile(engine, 0)
    profile.put_profile(engine, 0, ProfileSlot(name="real"))
    assert profile.get_profile(engine, 0) == ProfileSlot(name="real")


def test_profiles_are_isolated_by_domain(engine: Engine) -> None:
    """A profile written in domain A is invisible in B (and in the pool); A still reads it."""
    profile.put_profile(engine, SUB, ProfileSlot(name="only-in-sub"))
    assert profile.get_profile(engine, 0) is None
    assert profile.get_profile(engine, SHARED_POOL_AGENT_ID) is None
    assert profile.get_profile(engine, OTHER) is None
    assert profile.get_profile(engine, SUB) == ProfileSlot(name="only-in-sub")
    assert engine.ids_of_type(0, RecordType.PROFILE) == []
    assert engine.ids_of_type(SUB, RecordType.PROFILE) == [profile_id()]


def test_host_half_is_written_whole_and_inherits_the_distilled_half() -> None:
    """Name/role/personality/preferences replaced; emotion, MBTI, agent type inherited."""
    stored = _rich_profile()
    updated = profile.with_host_half(
        stored,
        name="Ada",
        role="",
        personality="",
        preferences={"x": "1"},
        updated_at_ms=9,
        agent_type=AgentType.SUB,  # ignored: the stored agent type wins
    )
    assert updated.role == ""
    assert updated.personality == ""  # not inherited: the host cleared it
    assert dict(updated.preferences) == {"x": "1"}
    assert updated.emotion_state == stored.emotion_state
    assert updated.mbti == stored.mbti
    assert updated.agent_type == AgentType.PRIMARY
    assert updated.updated_at_ms == 9


def test_host_half_without_a_stored_profile_takes_the_given_agent_type() -> None:
    fresh = profile.with_host_half(
        None, name="w", role="r", personality="p", preferences={}, updated_at_ms=1,
        agent_type=AgentType.SUB,
    )  # fmt: skip
    assert fresh == ProfileSlot(
        name="w", role="r", personality="p", agent_type=AgentType.SUB, updated_at_ms=1
    )


def test_distilled_half_keeps_the_host_fields() -> None:
    """Dream overwrites emotion and MBTI; personality only when non-empty."""
    stored = _rich_profile()
    emotion = EmotionScore(valence=0.1, arousal=0.9, dominance=0.3)
    mbti = MBTIScore(i_e=0.5, n_s=0.5, t_f=0.5, j_p=0.5)
    kept = profile.with_distilled(
        stored, emotion=emotion, mbti=mbti, personality="", updated_at_ms=7
    )
    assert kept.personality == stored.personality
    assert (kept.name, kept.role, dict(kept.preferences)) == (
        stored.name,
        stored.role,
        dict(stored.preferences),
    )
    assert (kept.emotion_state, kept.mbti, kept.updated_at_ms) == (emotion, mbti, 7)
    assert kept.mbti.type == "ESFP"
    replaced = profile.with_distilled(
        stored, emotion=emotion, mbti=mbti, personality="bold", updated_at_ms=8
    )
    assert replaced.personality == "bold"
    assert replaced.agent_type == stored.agent_type


def test_distilled_half_without_a_profile_starts_from_the_default() -> None:
    got = profile.with_distilled(
        None, emotion=EmotionScore(), mbti=MBTIScore(), personality="", updated_at_ms=3
    )
    assert (got.name, got.role, got.personality) == ("Agent", "assistant", "")
    assert got.agent_type == AgentType.PRIMARY
