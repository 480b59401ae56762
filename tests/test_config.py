"""Configuration values: validation, normalisation and the key kept out of reprs."""

from __future__ import annotations

import dataclasses

import pytest

from memhop.config import (
    DEFAULTS,
    MAX_CONTENT_RETENTION_MS,
    MAX_TIMEOUT_SECS,
    Defaults,
    LlmConfig,
    ProfileInput,
)
from memhop.errors import ConfigError, InvalidQueryError

GOOD = LlmConfig(api_url="http://127.0.0.1:9/v1", api_key="sk-secret-123", model="m")


def test_the_filled_table_is_upstreams() -> None:
    """24 topics, a floor of 20, one hour idle, seven days of retention."""
    # upstream's four, and memhop's floor for a scene the host left (settled_scene_floor)
    assert Defaults(24, 20, 3_600_000, 604_800_000, settled_scene_floor=4) == DEFAULTS


def test_an_unfilled_table_normalises_to_the_library_defaults() -> None:
    """Zeros are "not filled"; the all-zero table equals DEFAULTS field by field."""
    assert Defaults().normalized() == DEFAULTS
    assert Defaults(scene_dream_topic_threshold=5).normalized().scene_dream_topic_threshold == 5


def test_negative_knobs_switch_off_and_a_negative_floor_means_no_floor() -> None:
    """Negative threshold and TTL stay negative (off); a negative floor becomes 0."""
    table = Defaults(
        scene_dream_topic_threshold=-1, dream_compress_min_topics=-3, agent_idle_ttl_ms=-1
    ).normalized()
    assert table.scene_dream_topic_threshold == -1
    assert table.agent_idle_ttl_ms == -1
    assert table.dream_compress_min_topics == 0


@pytest.mark.parametrize("retention", [-1, MAX_CONTENT_RETENTION_MS + 1])
def test_retention_out_of_range_is_refused(retention: int) -> None:
    """Retention has no "off" and a ceiling; the ceiling itself is accepted."""
    with pytest.raises(ConfigError):
        Defaults(content_retention_ms=retention).validate()
    Defaults(content_retention_ms=MAX_CONTENT_RETENTION_MS).validate()


@pytest.mark.parametrize("missing", ["api_url", "api_key", "model"])
def test_a_half_specified_endpoint_is_refused(missing: str) -> None:
    """Each of URL, key and model is required; the full config passes."""
    GOOD.validate()
    with pytest.raises(ConfigError, match="are required"):
        dataclasses.replace(GOOD, **{missing: ""}).validate()


def test_a_timeout_go_could_not_hold_is_refused() -> None:
    """The ceiling is accepted, one more second is not."""
    dataclasses.replace(GOOD, timeout_secs=MAX_TIMEOUT_SECS).validate()
    with pytest.raises(ConfigError):
        dataclasses.replace(GOOD, timeout_secs=MAX_TIMEOUT_SECS + 1).validate()


def test_unset_budgets_take_the_defaults() -> None:
    """<= 0 means 120 s and 8192 tokens; set values are kept."""
    assert GOOD.effective_timeout_secs == 120
    assert dataclasses.replace(GOOD, timeout_secs=-5).effective_timeout_secs == 120
    assert dataclasses.replace(GOOD, timeout_secs=7).effective_timeout_secs == 7
    assert GOOD.effective_max_output_tokens == 8192
    assert dataclasses.replace(GOOD, max_output_tokens=64).effective_max_output_tokens == 64


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("http://h/api", "http://h/api/v1"),
        ("http://h/v1/", "http://h/v1"),
        (" http://h/v1/chat/completions ", "http://h/v1"),
        ("http://h/chat/completions", "http://h/v1"),
    ],
)
def test_the_endpoint_url_is_normalised(given: str, expected: str) -> None:
    """Trailing slashes and /chat/completions go; /v1 is appended once."""
    assert dataclasses.replace(GOOD, api_url=given).base_url == expected


def test_the_api_key_never_appears_in_repr() -> None:
    """The key is held but left out of the representation (and so out of logs)."""
    assert GOOD.api_key == "sk-secret-123"
    assert "sk-secret-123" not in repr(GOOD)
    assert "model='m'" in repr(GOOD)


def test_profile_input_requires_a_name_and_copies_preferences() -> None:
    """A blank name is refused; preferences are a read-only copy of the caller's dict."""
    prefs = {"tea": "green"}
    profile = ProfileInput(name="  Ada ", preferences=prefs)
    prefs["tea"] = "black"
    assert profile.preferences == {"tea": "green"}
    assert profile.require_name() == "Ada"
    with pytest.raises(InvalidQueryError, match="Name is required"):
        ProfileInput(name=" \t").require_name()
    assert hash(profile) == hash(ProfileInput(name="  Ada ", preferences={"x": "y"}))


@pytest.mark.parametrize(
    "config",
    [
        dataclasses.replace(GOOD, api_url=5),  # type: ignore[arg-type]
        dataclasses.replace(GOOD, timeout_secs="9"),  # type: ignore[arg-type]
        dataclasses.replace(GOOD, max_output_tokens=1.5),  # type: ignore[arg-type]
        dataclasses.replace(GOOD, timeout_secs=True),
    ],
)
def test_an_endpoint_of_the_wrong_types_is_a_config_error(config: LlmConfig) -> None:
    """Wrong types are refused by validation, not by a TypeError deep inside."""
    GOOD.validate()
    with pytest.raises(ConfigError, match="must be"):
        config.validate()


@pytest.mark.parametrize(
    "table",
    [
        Defaults(content_retention_ms="x"),  # type: ignore[arg-type]
        Defaults(agent_idle_ttl_ms=1.5),  # type: ignore[arg-type]
        Defaults(scene_dream_topic_threshold=None),  # type: ignore[arg-type]
    ],
)
def test_defaults_of_the_wrong_types_are_a_config_error(table: Defaults) -> None:
    """Every knob must be an integer; the library table itself passes."""
    DEFAULTS.validate()
    with pytest.raises(ConfigError, match="must be an integer"):
        table.validate()
