"""The profile brief follows upstream's digest (api.md §7.3)."""

from __future__ import annotations

from memhop import records as r
from memhop.api import _mapping as m


def test_an_empty_profile_has_an_empty_brief() -> None:
    assert m.profile_brief(r.ProfileSlot()) == ""
    # Stamps alone are not content.
    assert m.profile_brief(r.ProfileSlot(agent_type=1, updated_at_ms=5)) == ""


def test_a_full_profile_gives_six_lines_in_order() -> None:
    profile = r.ProfileSlot(
        name="测试画像",
        role="值守",
        personality="先测量再动手",
        emotion_state=r.EmotionScore(valence=0.8, arousal=0.6, dominance=0.5),
        mbti=r.MBTIScore(i_e=0.2, n_s=0.3, t_f=-0.1, j_p=0.4),
        preferences={"retry": "3", "mode": "strict"},
    )
    assert m.profile_brief(profile) == (
        "name: 测试画像\n"
        "role: 值守\n"
        "personality: 先测量再动手\n"
        "mbti: ESTP\n"
        "preferences: mode=strict, retry=3\n"
        "emotions: valence=0.80 arousal=0.60 dominance=0.50\n"
    )


def test_empty_lines_are_left_out() -> None:
    assert m.profile_brief(r.ProfileSlot(role="r")) == "role: r\n"
    mbti_only = r.ProfileSlot(mbti=r.MBTIScore(t_f=0.1))
    assert m.profile_brief(mbti_only) == "mbti: XXFX\n"
    emotion_only = r.ProfileSlot(emotion_state=r.EmotionScore(dominance=0.005))
    assert m.profile_brief(emotion_only) == "emotions: valence=0.00 arousal=0.00 dominance=0.01\n"


def test_fields_are_capped_at_160_runes_with_an_ellipsis() -> None:
    name = "名" * 200
    brief = m.profile_brief(r.ProfileSlot(name=name))
    assert brief == "name: " + "名" * 160 + "…\n"
    exact = "x" * 160
    assert m.profile_brief(r.ProfileSlot(role=exact)) == f"role: {exact}\n"


def test_preference_values_cap_at_120_and_keys_at_160() -> None:
    profile = r.ProfileSlot(preferences={"k" * 170: "v" * 121})
    assert m.profile_brief(profile) == f"preferences: {'k' * 160}…={'v' * 120}…\n"


def test_only_the_first_five_preferences_by_key_show() -> None:
    prefs = {k: k.upper() for k in ("g", "b", "é", "a", "f", "c", "Z")}
    brief = m.profile_brief(r.ProfileSlot(preferences=prefs))
    # Byte order: "Z" (0x5A) sorts before the lowercase letters, "é" after them.
    assert brief == "preferences: Z=Z, a=A, b=B, c=C, f=F\n"


def test_the_brief_is_repeatable() -> None:
    profile = r.ProfileSlot(name="n", preferences={str(i): str(i) for i in range(9)})
    assert m.profile_brief(profile) == m.profile_brief(profile)


def test_the_worst_case_stays_under_2100_runes() -> None:
    long = "长" * 500
    profile = r.ProfileSlot(
        name=long,
        role=long,
        personality=long,
        emotion_state=r.EmotionScore(valence=1.0, arousal=1.0, dominance=1.0),
        mbti=r.MBTIScore(i_e=-1.0, n_s=-1.0, t_f=-1.0, j_p=-1.0),
        preferences={f"{i}{long}": long for i in range(8)},
    )
    brief = m.profile_brief(profile)
    assert len(brief) <= m.BRIEF_WORST_CASE_RUNES
    assert len(brief) == 2010  # upstream's measured worst case
    assert brief.count("\n") == 6
