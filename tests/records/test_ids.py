"""Id derivations against storage.md §5's vectors, and the 16-hex surface form."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop import ids
from memhop.errors import InvalidQueryError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "ef46db3751d8e999"),
        ("a", "d24ec4f1a98c6e5b"),
        ("profile", "3861c5f61d35793a"),
        ("turn:1:1", "66b253e8270de962"),
        ("content:1:1", "e899c0be4d18bbff"),
        ("plan:1:1", "0c019cb450694299"),
        ("fused:100:1000:1001:11:12", "df6338b02949ab9b"),
        ("scene-node:0000000000000001", "578dce214d9736c1"),
        ("l1edge:1:2", "794580b8e734d854"),
    ],
)
def test_hash_id_matches_the_pinned_vectors(text: str, expected: str) -> None:
    assert ids.format_id(ids.hash_id(text)) == expected


def test_each_derivation_hashes_its_namespaced_string() -> None:
    assert ids.format_id(ids.profile_id()) == "3861c5f61d35793a"
    assert ids.format_id(ids.turn_topic_id(1, 1)) == "66b253e8270de962"
    assert ids.format_id(ids.content_id(1, 1)) == "e899c0be4d18bbff"
    assert ids.format_id(ids.plan_node_id(1, 1)) == "0c019cb450694299"
    assert ids.format_id(ids.scene_node_id(1)) == "578dce214d9736c1"
    assert ids.format_id(ids.l1_edge_id(1, 2)) == "794580b8e734d854"
    assert ids.format_id(ids.fused_topic_id(100, 1000, 1001, [12, 11])) == "df6338b02949ab9b"


def test_fused_id_ignores_member_order_but_not_members_or_scene() -> None:
    base = ids.fused_topic_id(100, 1000, 1001, [11, 12])
    assert ids.fused_topic_id(100, 1000, 1001, (12, 11)) == base
    assert ids.fused_topic_id(100, 1000, 1001, [13, 14]) != base
    assert ids.fused_topic_id(101, 1000, 1001, [11, 12]) != base
    assert ids.fused_topic_id(100, 1000, 1002, [11, 12]) != base


def test_l1_edge_id_is_symmetric() -> None:
    assert ids.l1_edge_id(2, 1) == ids.l1_edge_id(1, 2)


def test_ids_above_2_63_format_in_decimal_unsigned() -> None:
    big = 2**64 - 1
    assert ids.turn_topic_id(big, 1) == ids.hash_id(f"turn:{big}:1")
    assert ids.scene_node_id(big) == ids.hash_id("scene-node:ffffffffffffffff")


def test_graph_ids_follow_the_l3_key_forms() -> None:
    g = ids.graph_id("rust-notes")
    assert g == ids.hash_id("rust-notes")
    assert ids.graph_node_id(g, "Borrow checker") == ids.hash_id(
        f"{ids.format_id(g)}:Borrow checker"
    )
    # Members are written like Go's %v of a []uint64: ascending, space-separated.
    assert ids.graph_edge_id(g, [30, 4, 100], 2) == ids.hash_id(f"{ids.format_id(g)}:[4 30 100]:2")
    assert ids.graph_edge_id(g, [7], 0) == ids.hash_id(f"{ids.format_id(g)}:[7]:0")
    assert ids.graph_edge_id(g, [4, 30], 1) != ids.graph_edge_id(g, [4, 30], 2)


def test_reserved_agent_ids() -> None:
    assert ids.PRIMARY_AGENT_ID == 0
    assert ids.SHARED_POOL_AGENT_ID == 0x4C33000000000000
    assert ids.SHARED_POOL_AGENT_ID.to_bytes(8, "big")[:2] == b"L3"


_SAMPLES = range(1, 17)


def _families() -> dict[str, set[int]]:
    pairs = list(itertools.product(_SAMPLES, _SAMPLES))
    return {
        "turn": {ids.turn_topic_id(a, b) for a, b in pairs},
        "content": {ids.content_id(a, b) for a, b in pairs},
        "plan": {ids.plan_node_id(a, b) for a, b in pairs},
        "scene-node": {ids.scene_node_id(a) for a in _SAMPLES},
        "fused": {ids.fused_topic_id(a, b, b + 1, [a, b]) for a, b in pairs},
    }


def test_derived_id_namespaces_are_disjoint() -> None:
    families = _families()
    for (name_a, a), (name_b, b) in itertools.combinations(families.items(), 2):
        assert not a & b, f"{name_a} and {name_b} collide"


def test_derived_id_families_are_injective() -> None:
    grid = list(itertools.product(range(1, 65), range(1, 65)))
    assert len({ids.turn_topic_id(s, q) for s, q in grid}) == 64 * 64
    assert len({ids.content_id(t, q) for t, q in grid}) == 64 * 64
    assert len({ids.plan_node_id(t, q) for t, q in grid}) == 64 * 64
    assert len({ids.scene_node_id(s) for s in range(1, 4097)}) == 4096


@given(st.integers(min_value=1, max_value=2**64 - 1))
def test_format_then_parse_round_trips(value: int) -> None:
    text = ids.format_id(value)
    assert text == f"{value:016x}"  # the surface form, spelt as a format spec
    assert len(text) == 16
    assert text == text.lower()
    assert ids.parse_id(text) == value
    assert ids.parse_id(text.upper()) == value


def test_format_pads_with_zeros() -> None:
    assert ids.format_id(1) == "0000000000000001"


def test_parse_accepts_mixed_case() -> None:
    assert ids.parse_id("ABCDEF0123456789") == ids.parse_id("abcdef0123456789")
    assert ids.parse_id("AbCdEf0123456789") == 0xABCDEF0123456789


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("000000000000001", "16 hex digits"),  # 15
        ("00000000000000001", "16 hex digits"),  # 17
        ("", "16 hex digits"),
        ("000000000000000g", "not hex"),
        ("+000000000000001", "not hex"),
        ("0x00000000000001", "not hex"),
        ("00000000_0000001", "not hex"),
        ("０００００００００００００００１", "not hex"),  # full-width digits
        ("0000000000000000", "reserved zero"),
    ],
)
def test_parse_refuses_malformed_ids_with_invalid_query(text: str, fragment: str) -> None:
    assert ids.parse_id("0000000000000001", "scene_id") == 1  # positive control
    with pytest.raises(InvalidQueryError) as info:
        ids.parse_id(text, "scene_id")
    assert fragment in str(info.value)
    assert "scene_id" in str(info.value)
    assert repr(text) in str(info.value)
    assert info.value.code == 1003
