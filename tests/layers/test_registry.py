"""Sub-agent registry primitives over a real engine file."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.engine import RECORD_HEADER_SIZE, Engine, open_engine
from memhop.errors import (
    Code,
    CorruptionError,
    CRCMismatchError,
    DeserializationError,
    InvalidQueryError,
    NotFoundError,
)
from memhop.ids import PRIMARY_AGENT_ID, SHARED_POOL_AGENT_ID, format_id
from memhop.layers import codec, registry
from memhop.records import ProfileSlot, RecordType, RegistryName
from tests.faults import flip_byte, reopen

ALPHA = 0x00000000000000A1
BETA = 0x00000000000000B2
GAMMA = 0x00000000000000C3
U64 = st.integers(min_value=0, max_value=2**64 - 1)


def _sequence(values: list[int]) -> tuple[Callable[[], int], list[int]]:
    """A rand that answers ``values`` in order; the list records what was drawn."""
    drawn: list[int] = []
    it = iter(values)

    def rand() -> int:
        value = next(it)
        drawn.append(value)
        return value

    return rand, drawn


# ---- load and write ----------------------------------------------------------------------


def test_names_survivereopen(engine: Engine) -> None:
    """Registrations are rebuilt from records: both maps, ascending by agent id."""
    registry.write_registration(engine, BETA, "beta")
    registry.write_registration(engine, ALPHA, "alpha")
    engine = reopen(engine)
    try:
        reg = registry.load_registry(engine)
        assert dict(reg.by_name) == {"alpha": ALPHA, "beta": BETA}
        assert list(reg.by_agent.items()) == [(ALPHA, "alpha"), (BETA, "beta")]
        assert reg.unresolved == ()
        assert reg.shadowed == ()
        assert reg.is_resolved()
        reg.require_resolved()  # does not raise
    finally:
        engine.close()


def test_an_empty_file_has_an_empty_registry(engine: Engine) -> None:
    reg = registry.load_registry(engine)
    assert (dict(reg.by_name), dict(reg.by_agent), reg.unresolved) == ({}, {}, ())


def test_registration_is_the_agent_id_record_in_its_own_domain(engine: Engine) -> None:
    """Type 0x10, agent id = id hash; unreachable from another domain (positive control)."""
    registry.write_registration(engine, ALPHA, "alpha")
    frame = engine.read(ALPHA, ALPHA)
    assert (frame.rec_type, frame.agent_id, frame.id_hash) == (0x10, ALPHA, ALPHA)
    assert frame.payload == b'"alpha"'
    assert codec.read_optional(engine, ALPHA, ALPHA, RegistryName) == RegistryName(name="alpha")
    assert codec.read_optional(engine, BETA, ALPHA, RegistryName) is None
    assert engine.ids_of_type(BETA, RecordType.REGISTRY) == []
    assert engine.ids_of_type(0, RecordType.REGISTRY) == []


def test_primary_and_pool_never_appear(engine: Engine) -> None:
    """A 0x10 record in domain 0 or in the pool is ignored; a real one beside them resolves."""
    for reserved in (PRIMARY_AGENT_ID, SHARED_POOL_AGENT_ID):
        engine.write(reserved, RecordType.REGISTRY, reserved, b'"ghost"')
        engine.write(reserved, RecordType.REGISTRY, 99, b"not json")
    registry.write_registration(engine, ALPHA, "alpha")
    reg = registry.load_registry(engine)
    assert dict(reg.by_name) == {"alpha": ALPHA}
    assert reg.unresolved == ()


def test_domains_with_no_registration_are_not_listed(engine: Engine) -> None:
    """Only 0x10 records name a tenant: a domain holding only a profile is not registered."""
    codec.write(engine, GAMMA, 1, ProfileSlot(name="nameless"))
    registry.write_registration(engine, ALPHA, "alpha")
    reg = registry.load_registry(engine)
    assert dict(reg.by_agent) == {ALPHA: "alpha"}
    assert reg.unresolved == ()


def test_duplicate_names_resolve_to_the_higher_agent_id(engine: Engine) -> None:
    registry.write_registration(engine, BETA, "same")
    registry.write_registration(engine, ALPHA, "same")
    registry.write_registration(engine, GAMMA, "other")
    engine = reopen(engine)
    try:
        reg = registry.load_registry(engine)
        assert reg.by_name["same"] == BETA
        assert reg.by_name["other"] == GAMMA
        assert dict(reg.by_agent) == {BETA: "same", GAMMA: "other"}
        assert reg.shadowed == (ALPHA,)
        assert reg.unresolved == ()
    finally:
        engine.close()


@pytest.mark.parametrize(
    ("payload", "error", "code"),
    [
        (b"not json", DeserializationError, Code.DESERIALIZATION),
        (b"42", DeserializationError, Code.DESERIALIZATION),
        (b'""', CorruptionError, Code.CORRUPTION),
    ],
)
def test_an_undecodable_registration_is_reported_not_hidden(
    engine: Engine, payload: bytes, error: type[Exception], code: int
) -> None:
    """The bad domain lands in ``unresolved`` with the upstream message; a good one resolves."""
    engine.write(BETA, RecordType.REGISTRY, BETA, payload)
    registry.write_registration(engine, ALPHA, "alpha")
    engine = reopen(engine)
    try:
        reg = registry.load_registry(engine)
        assert reg.unresolved == (BETA,)
        assert dict(reg.by_name) == {"alpha": ALPHA}
        assert BETA not in reg.by_agent
        assert not reg.is_resolved()
        assert registry.unresolved_message(BETA) == (
            f"domain {format_id(BETA)} carries no readable tenant key"
        )
        with pytest.raises(error) as info:
            reg.require_resolved()
        assert "domain 00000000000000b2 carries no readable tenant key" in str(info.value)
        assert getattr(info.value, "code", None) == code
        assert not isinstance(info.value, NotFoundError)
    finally:
        engine.close()


def test_a_registration_that_fails_its_crc_is_unresolved(engine: Engine) -> None:
    """Disk rot in one registration: that domain is unresolved with 5004, the others resolve."""
    registry.write_registration(engine, ALPHA, "alpha")
    registry.write_registration(engine, BETA, "beta")
    registry.write_registration(engine, GAMMA, "gamma")
    offset = engine.offset_of(BETA, BETA)
    assert offset is not None
    engine.close()
    flip_byte(engine.path, offset + RECORD_HEADER_SIZE + 1)
    reopened = open_engine(engine.path)
    try:
        reg = registry.load_registry(reopened)
        assert reg.unresolved == (BETA,)
        assert isinstance(reg.causes[BETA], CRCMismatchError)
        assert dict(reg.by_name) == {"alpha": ALPHA, "gamma": GAMMA}
        with pytest.raises(CRCMismatchError) as info:
            reg.require_resolved()
        assert info.value.code == Code.CRC_MISMATCH
        assert "00000000000000b2 carries no readable tenant key" in str(info.value)
    finally:
        reopened.close()


def test_unresolved_domains_are_listed_ascending(engine: Engine) -> None:
    engine.write(GAMMA, RecordType.REGISTRY, GAMMA, b'""')
    engine.write(ALPHA, RecordType.REGISTRY, ALPHA, b"{")
    registry.write_registration(engine, BETA, "beta")
    reg = registry.load_registry(engine)
    assert reg.unresolved == (ALPHA, GAMMA)
    assert dict(reg.by_name) == {"beta": BETA}
    with pytest.raises(DeserializationError, match="00000000000000a1"):
        reg.require_resolved()  # the first unresolved domain is named


def test_write_registration_refuses_reserved_domains_and_raw_names(engine: Engine) -> None:
    for reserved in (PRIMARY_AGENT_ID, SHARED_POOL_AGENT_ID):
        with pytest.raises(InvalidQueryError):
            registry.write_registration(engine, reserved, "ghost")
    for bad in ("", "  ", " padded ", "x" * 257):
        with pytest.raises(InvalidQueryError):
            registry.write_registration(engine, ALPHA, bad)
    assert engine.agents() == []  # nothing was written
    registry.write_registration(engine, ALPHA, "ok")  # positive control
    assert engine.agents() == [ALPHA]


# ---- draw_agent_id -----------------------------------------------------------------------


def test_draw_agent_id_redraws_on_zero_pool_and_taken() -> None:
    rand, drawn = _sequence([0, SHARED_POOL_AGENT_ID, ALPHA, 0, BETA, GAMMA])
    assert registry.draw_agent_id({ALPHA}, rand) == BETA
    assert drawn == [0, SHARED_POOL_AGENT_ID, ALPHA, 0, BETA]


def test_draw_agent_id_default_rand_gives_a_usable_u64() -> None:
    taken: set[int] = set()
    for _ in range(50):
        got = registry.draw_agent_id(taken)
        assert 0 < got < 2**64
        assert got != SHARED_POOL_AGENT_ID
        assert got not in taken
        taken.add(got)


@given(
    candidates=st.lists(st.one_of(U64, st.sampled_from([0, SHARED_POOL_AGENT_ID])), max_size=20),
    taken=st.sets(U64, max_size=10),
    final=U64,
)
def test_draw_agent_id_takes_the_first_acceptable_draw(
    candidates: list[int], taken: set[int], final: int
) -> None:
    reserved = {0, SHARED_POOL_AGENT_ID} | taken
    final = final if final not in reserved else 1 if 1 not in reserved else 2**64 - 1
    if final in reserved:
        return
    rand, _ = _sequence([*candidates, final])
    expected = next(c for c in [*candidates, final] if c not in reserved)
    assert registry.draw_agent_id(taken, rand) == expected


# ---- names -------------------------------------------------------------------------------


def test_name_cap_is_256_bytes_not_characters() -> None:
    assert registry.MAX_TENANT_NAME_BYTES == 256
    assert registry.normalise_tenant_name("n" * 256) == "n" * 256
    with pytest.raises(InvalidQueryError, match="256 bytes") as info:
        registry.normalise_tenant_name("n" * 257)
    assert info.value.code == Code.INVALID_QUERY
    cjk_80 = "名" * 80
    assert len(cjk_80.encode("utf-8")) == 240
    assert registry.normalise_tenant_name(cjk_80) == cjk_80
    cjk_90 = "名" * 90
    assert len(cjk_90.encode("utf-8")) == 270
    with pytest.raises(InvalidQueryError, match="256 bytes"):
        registry.normalise_tenant_name(cjk_90)


def test_names_are_trimmed_and_blank_is_refused() -> None:
    assert registry.normalise_tenant_name("  worker \n") == "worker"
    assert registry.normalise_tenant_name(" " + "n" * 256 + " ") == "n" * 256  # cap after trim
    for blank in ("", "   ", "\t\n"):
        with pytest.raises(InvalidQueryError) as info:
            registry.normalise_tenant_name(blank)
        assert info.value.code == Code.INVALID_QUERY


def test_trim_follows_go_trimspace() -> None:
    """Unicode spaces go (NBSP, ideographic space, NEL); U+001C..U+001F and U+200B stay."""
    assert registry.normalise_tenant_name("\u3000\xa0worker\x85\u2009") == "worker"
    assert registry.normalise_tenant_name("\x1cworker") == "\x1cworker"
    assert registry.normalise_tenant_name("worker\u200b") == "worker\u200b"
    with pytest.raises(InvalidQueryError):
        registry.normalise_tenant_name("\u3000\u2028")
