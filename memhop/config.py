"""Configuration values: the model endpoint, the library defaults, a profile to seed.

Frozen dataclasses with no I/O. Validation raises ConfigError (or
InvalidQueryError for a blank profile name) and runs before anything touches
the file system. ``Defaults.normalized()`` is the one place where 0 means
"library default" and a negative number means "off".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Literal

from memhop.errors import ConfigError, InvalidQueryError

__all__ = [
    "DEFAULTS",
    "DEFAULT_COMPACT_DEAD_RATIO",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "DEFAULT_TIMEOUT_SECS",
    "MAX_CONTENT_RETENTION_MS",
    "MAX_NAME_BYTES",
    "MAX_PREFERENCES",
    "MAX_SHORT_TEXT_BYTES",
    "MAX_TEXT_BYTES",
    "MAX_TIMEOUT_SECS",
    "MAX_TITLE_BYTES",
    "STRUCTURED_OUTPUT_MODES",
    "Defaults",
    "LlmConfig",
    "ProfileInput",
    "valid_text",
]

# Go keeps durations in int64 nanoseconds; a larger value would wrap into
# "no timeout", so upstream refuses it and memhop keeps the same ceiling.
MAX_TIMEOUT_SECS = (2**63 - 1) // 10**9
MAX_CONTENT_RETENTION_MS = (2**63 - 1) // 10**6
DEFAULT_TIMEOUT_SECS = 120
DEFAULT_MAX_OUTPUT_TOKENS = 8192
DEFAULT_COMPACT_DEAD_RATIO = 0.25
"""Compact in place once a quarter of the file is dead (it stays under 4/3 of its live records).

Chosen by benches/compaction.py (docs/performance.md): amortised, the compactions cost a small
fraction of a turn at any ratio measured, so the ratio is set by the disk bound and how soon
deleted bytes go, against how often every call waits for one compaction."""
DURABILITY_MODES = ("call", "turn")
"""``Defaults.durability``: an fsync per writing call, or one per turn at ``update``."""
STRUCTURED_OUTPUT_MODES = ("auto", "json_schema", "json_object", "off")

# Caps on text a host (or a model through memhop.tools) hands in, in UTF-8
# bytes, checked before anything is written (docs/reliability.md lists them).
MAX_TEXT_BYTES = 64 * 1024
"""Any text field without a cap of its own: lines, L3 content, plan summaries, personality."""
MAX_SHORT_TEXT_BYTES = 4 * 1024
"""Profile name and role (a sub-agent's name, its handle, has 256), preference values, L3 source
references."""
MAX_TITLE_BYTES = 1024
"""Plan step titles; L3 titles, domains and node types; scene, topic and graph names."""
MAX_NAME_BYTES = 256
"""Preference keys and event types."""
MAX_PREFERENCES = 256
"""Entries in a profile's preferences."""


def _require_ints(config: object, names: tuple[str, ...], owner: str) -> None:
    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int):
            msg = f"{owner}.{name} must be an integer, not {type(value).__name__}"
            raise ConfigError(msg)


def valid_text(value: object, what: str, max_bytes: int | None = MAX_TEXT_BYTES) -> str:
    """Return ``value`` if it is a string of at most ``max_bytes`` UTF-8 bytes, else refuse it.

    None is for the lines of a turn, whose record budget (checked next, on the
    encoded payload) is their cap. A lone surrogate (which JSON allows and
    Python keeps) has no UTF-8 form; it is refused rather than silently replaced.
    """
    if type(value) is not str and not isinstance(value, str):  # a str, the usual, asked first
        msg = f"{what} must be a string, not {type(value).__name__}"
        raise InvalidQueryError(msg)
    # Refused before encoding a huge string, and again on its encoded size.
    if max_bytes is not None and len(value) > max_bytes:
        raise InvalidQueryError(_over_cap(what, max_bytes))
    if value.isascii():  # no surrogate, and a byte a character: nothing to encode
        return value
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        msg = f"{what} is not valid Unicode text (a lone surrogate at {exc.start})"
        raise InvalidQueryError(msg) from None
    if max_bytes is not None and size > max_bytes:
        raise InvalidQueryError(_over_cap(what, max_bytes))
    return value


def _over_cap(what: str, max_bytes: int) -> str:
    return f"{what} exceeds its cap of {max_bytes} UTF-8 bytes"


@dataclass(frozen=True)
class LlmConfig:
    """An OpenAI-compatible endpoint; ``timeout_secs``/``max_output_tokens`` <= 0 mean default.

    The key is never shown: it is left out of ``repr`` so it cannot reach a log line.
    """

    api_url: str
    api_key: str = field(repr=False)
    model: str
    timeout_secs: int = 0
    max_output_tokens: int = 0
    structured_output: str = "auto"
    """How replies are held to their JSON schema: "auto" (``json_schema``, then ``json_object``
    with the schema, then plain prompting, as the endpoint accepts), one of those three
    ("json_schema", "json_object", "off" = plain prompting) to force it."""
    context_tokens: int = 0
    """The model's context window in tokens (<= 0: not stated); every request's ``max_tokens``
    is capped to what fits beside its prompt."""

    def validate(self) -> None:
        """Refuse a half-specified endpoint or a timeout Go could not represent."""
        for what in ("api_url", "api_key", "model", "structured_output"):
            if not isinstance(getattr(self, what), str):
                msg = f"LLM.{what} must be a string"
                raise ConfigError(msg)
        _require_ints(self, ("timeout_secs", "max_output_tokens", "context_tokens"), "LLM")
        if self.structured_output not in STRUCTURED_OUTPUT_MODES:
            modes = ", ".join(repr(m) for m in STRUCTURED_OUTPUT_MODES)
            msg = f"LLM.structured_output {self.structured_output!r} is not one of {modes}"
            raise ConfigError(msg)
        if not self.api_url or not self.api_key or not self.model:
            msg = "LLM.APIURL, LLM.APIKey and LLM.Model are required"
            raise ConfigError(msg)
        if self.timeout_secs > MAX_TIMEOUT_SECS:
            msg = f"LLM.TimeoutSecs {self.timeout_secs} exceeds the ceiling of {MAX_TIMEOUT_SECS}"
            raise ConfigError(msg)

    @property
    def effective_timeout_secs(self) -> int:
        return self.timeout_secs if self.timeout_secs > 0 else DEFAULT_TIMEOUT_SECS

    @property
    def effective_max_output_tokens(self) -> int:
        return self.max_output_tokens if self.max_output_tokens > 0 else DEFAULT_MAX_OUTPUT_TOKENS

    @property
    def base_url(self) -> str:
        """The URL the SDK is given: trimmed, without ``/chat/completions``, ending in ``/v1``."""
        url = self.api_url.strip().rstrip("/")
        url = url.removesuffix("/chat/completions").rstrip("/")
        return url if url.endswith("/v1") else url + "/v1"


@dataclass(frozen=True)
class Defaults:
    """Library knobs; 0 means "library default", a negative number means "off".

    ``scene_dream_topic_threshold``: after ``update``, a Dream pass for the
    scene starts in the background once its surface is above it; a background
    pass runs the whole pipeline at most once an hour per domain and otherwise
    only folds its scene (memhop's own; ``Session.dream`` is always whole).
    Negative: no pass starts on its own at all (nor on ``settled_scene_floor``'s
    cadence).
    ``settled_scene_floor`` (memhop's own): when ``search`` leaves a scene (a
    new scene, or another one named), a background pass folds the scene left
    toward this many surface rows (if it has more); when ``search`` comes back
    after ``agent_idle_ttl_ms`` or more without a turn, a pass folds the
    current scene toward ``dream_compress_min_topics``. Either pass also runs
    the domain-wide stages (retention, L1, L0) when the last whole pass is an
    hour old. Default 4; negative: upstream's threshold trigger alone.
    ``content_retention_ms`` has no "off": a negative value is refused.
    ``sweep_unfolded`` (memhop's own): False keeps an original line or event
    past the window until its turn is folded into a Dream row that still
    exists and every word of it that carries content is kept without it (the
    turn's keyword track, the Dream rows' tracks and summaries); True sweeps
    every original past the window, as upstream does.
    ``compact_dead_ratio`` (memhop's own, a float): after a delete, and after a
    Dream pass once one live record in 100 changed since the last measure, the
    file is compacted in place when its dead bytes (deleted and superseded
    records, tombstones, old snapshots) pass this share of it;
    0 (or negative) compacts only when the host asks, as upstream. Unlike the
    integer knobs, its default is the value itself, not 0.
    ``durability`` (memhop's own): "call" (the default) returns every call that
    records something with its records durable; "turn" lets ``append_archive``
    return without an fsync, and the turn's ``update`` makes the turn's events,
    lines and topic row durable with one (a crash before it can take back the
    open turn's events). Either way ``search`` on an existing scene makes no
    fsync of its own: the turn counter it bumps becomes durable with the
    turn's next write; a scene's first turn is synced before ``search`` returns.
    ``trim_heap`` (memhop's own): after a Dream pass or a compaction, at most
    once every 10 seconds, hand the pages the C heap holds free back to the
    system (glibc's ``malloc_trim``; at 10^5 turns 74 MiB of its 171 MiB heap
    were free and resident without it). False leaves them to the allocator; no
    effect where the C library has no ``malloc_trim``.
    """

    scene_dream_topic_threshold: int = 0
    dream_compress_min_topics: int = 0
    agent_idle_ttl_ms: int = 0
    content_retention_ms: int = 0
    sweep_unfolded: bool = False
    compact_dead_ratio: float = DEFAULT_COMPACT_DEAD_RATIO
    durability: Literal["call", "turn"] = "call"
    settled_scene_floor: int = 0
    trim_heap: bool = True

    def validate(self) -> None:
        """Refuse non-integer knobs and a retention that is negative or past Go's range."""
        _require_ints(
            self,
            (
                "scene_dream_topic_threshold",
                "dream_compress_min_topics",
                "agent_idle_ttl_ms",
                "content_retention_ms",
                "settled_scene_floor",
            ),
            "Defaults",
        )
        for name in ("sweep_unfolded", "trim_heap"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                msg = f"Defaults.{name} must be a bool, not {type(value).__name__}"
                raise ConfigError(msg)
        ratio = self.compact_dead_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, int | float):
            msg = f"Defaults.compact_dead_ratio must be a number, not {type(ratio).__name__}"
            raise ConfigError(msg)
        if not ratio < 1:  # also refuses NaN
            msg = (
                f"Defaults.compact_dead_ratio {ratio} must be below 1 (a share of the file;"
                " 0 compacts only when asked)"
            )
            raise ConfigError(msg)
        if self.durability not in DURABILITY_MODES:
            msg = (
                f"Defaults.durability must be one of {', '.join(map(repr, DURABILITY_MODES))},"
                f" not {self.durability!r}"
            )
            raise ConfigError(msg)
        if self.content_retention_ms < 0:
            msg = "Defaults.content_retention_ms must not be negative: retention cannot be off"
            raise ConfigError(msg)
        if self.content_retention_ms > MAX_CONTENT_RETENTION_MS:
            msg = (
                f"Defaults.content_retention_ms {self.content_retention_ms} exceeds the ceiling"
                f" of {MAX_CONTENT_RETENTION_MS}"
            )
            raise ConfigError(msg)

    def normalized(self) -> Defaults:
        """Return the table the library runs with: zeros filled, negatives mapped to "off"."""
        filled = replace(
            self,
            scene_dream_topic_threshold=self.scene_dream_topic_threshold
            or _LIBRARY.scene_dream_topic_threshold,
            dream_compress_min_topics=self.dream_compress_min_topics
            or _LIBRARY.dream_compress_min_topics,
            agent_idle_ttl_ms=self.agent_idle_ttl_ms or _LIBRARY.agent_idle_ttl_ms,
            content_retention_ms=self.content_retention_ms or _LIBRARY.content_retention_ms,
            settled_scene_floor=self.settled_scene_floor or _LIBRARY.settled_scene_floor,
        )
        # A negative floor means "no floor": converge as far as the model allows; a
        # negative ratio means "never on its own", as 0 does.
        return replace(
            filled,
            dream_compress_min_topics=max(filled.dream_compress_min_topics, 0),
            compact_dead_ratio=max(float(filled.compact_dead_ratio), 0.0),
        )


_LIBRARY = Defaults(
    scene_dream_topic_threshold=24,
    dream_compress_min_topics=20,
    agent_idle_ttl_ms=3_600_000,
    content_retention_ms=604_800_000,
    settled_scene_floor=4,
)
DEFAULTS = _LIBRARY
"""The filled table: 24 topics, a floor of 20, one hour idle, seven days of retention, and a
scene left folded toward 4 rows."""


@dataclass(frozen=True)
class ProfileInput:
    """The host-owned half of a profile: name, role, personality and preferences."""

    name: str
    role: str = ""
    personality: str = ""
    preferences: Mapping[str, str] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        valid_text(self.name, "profile name", MAX_SHORT_TEXT_BYTES)
        valid_text(self.role, "profile role", MAX_SHORT_TEXT_BYTES)
        valid_text(self.personality, "profile personality")
        if not isinstance(self.preferences, Mapping):
            msg = "profile preferences must be a mapping of strings to strings"
            raise InvalidQueryError(msg)
        if len(self.preferences) > MAX_PREFERENCES:
            msg = f"{len(self.preferences)} preferences exceed the cap of {MAX_PREFERENCES}"
            raise InvalidQueryError(msg)
        for key, value in self.preferences.items():
            valid_text(key, "a preference key", MAX_NAME_BYTES)
            valid_text(value, f"preference {key[:40]!r}", MAX_SHORT_TEXT_BYTES)
        # A read-only copy: the caller's dict may change after the call.
        object.__setattr__(self, "preferences", MappingProxyType(dict(self.preferences)))

    def require_name(self) -> str:
        """Return the trimmed name, refusing a blank one."""
        name = self.name.strip()
        if not name:
            msg = "profile Name is required"
            raise InvalidQueryError(msg)
        return name
