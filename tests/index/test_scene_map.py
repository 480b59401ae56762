"""The scene map file: exact round trips, and refusal of anything not a whole well-formed map."""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from memhop.domain.scene_map_codec import decode_maps, encode_maps
from memhop.index.scene_map import DomainMap

U64 = st.integers(min_value=0, max_value=2**64 - 1)
U32 = st.integers(min_value=0, max_value=2**32 - 1)
Scenes = list[tuple[int, list[tuple[int, list[int]]]]]
NONE = (0, 0, 0)  # no current scene

_TOPICS = st.lists(st.tuples(U64, st.lists(U64, max_size=6)), max_size=5, unique_by=lambda t: t[0])


@st.composite
def _domain(draw: st.DrawFn, agent_id: int) -> tuple[DomainMap, Scenes]:
    scene_ids = sorted(draw(st.lists(U64, unique=True, max_size=6)))
    scenes = [(s, draw(_TOPICS)) for s in scene_ids]
    digest = draw(st.binary(min_size=16, max_size=16))
    rank = (draw(st.integers(-(2**63), 2**63 - 1)), draw(U64))
    built = DomainMap.build(agent_id, draw(U64), digest, draw(U32), (draw(U64), *rank), scenes)
    return built, scenes


@st.composite
def _domains(draw: st.DrawFn) -> list[tuple[DomainMap, Scenes]]:
    agents = draw(st.lists(U64, min_size=1, max_size=4, unique=True))
    return [draw(_domain(a)) for a in agents]


def _unknown_scenes(scenes: Scenes) -> set[int]:
    """Ids next to and beyond the known ones (where a binary search slips), none of them known."""
    known = {s for s, _ in scenes}
    near = {0, 2**64 - 1} | {s + d for s in known for d in (-1, 1)}
    return {s for s in near if 0 <= s < 2**64} - known


@given(domains=_domains())
def test_decode_inverts_encode_and_answers_what_was_built(
    domains: list[tuple[DomainMap, Scenes]],
) -> None:
    """Every field comes back equal, and topics_of / members_of answer as the scenes built them."""
    decoded = decode_maps(encode_maps(m for m, _ in domains))
    assert set(decoded) == {m.agent_id for m, _ in domains}
    for built, scenes in domains:
        got = decoded[built.agent_id]
        assert got.agent_id == built.agent_id
        assert got.covered_end == built.covered_end
        assert got.digest == built.digest
        assert got.seal == built.seal
        assert got.current_scene == built.current_scene
        assert (got.current_used_at, got.current_turns) == (
            built.current_used_at,
            built.current_turns,
        )
        assert got.scene_ids == built.scene_ids
        assert got.scene_ends == built.scene_ends
        assert got.topic_ids == built.topic_ids
        assert got.topic_ends == built.topic_ends
        assert got.member_ids == built.member_ids
        listed: dict[int, list[list[int]]] = {}
        for scene_id, topics in scenes:
            assert got.topics_of(scene_id) == [t for t, _ in topics]
            for topic_id, members in topics:
                assert got.members_of(topic_id, scene_id) == members
                listed.setdefault(topic_id, []).append(members)
        for unknown in _unknown_scenes(scenes):
            assert got.topics_of(unknown) == []
            for topic_id, lists in listed.items():
                assert got.members_of(topic_id, unknown) in lists


@given(
    built=_domain(7),
    replaced=st.dictionaries(
        st.one_of(U64, st.integers(0, 12)), _TOPICS.map(lambda ts: ts[:2]), max_size=4
    ),
    data=st.data(),
)
def test_a_spliced_map_is_the_map_built_from_its_scenes(
    built: tuple[DomainMap, Scenes], replaced: dict[int, Any], data: st.DataObject
) -> None:
    """Each scene given is listed as given (an empty one left out); every other as it was."""
    old, scenes = built
    given = dict(replaced)
    for scene_id, _ in scenes:  # some of the map's own scenes too
        if data.draw(st.booleans()):
            given[scene_id] = data.draw(_TOPICS)
    merged: Scenes = []
    for scene_id in sorted({s for s, _ in scenes} | given.keys()):
        if scene_id in given:
            if given[scene_id]:
                merged.append((scene_id, given[scene_id]))
        else:
            merged.append((scene_id, dict(scenes)[scene_id]))
    decoded = decode_maps(encode_maps([old]))[7]  # its columns are views of the bytes
    for source in (old, decoded):
        got = source.spliced(given, covered_end=9, digest=b"d" * 16, seal=3, current=(5, 6, 2))
        want = DomainMap.build(7, 9, b"d" * 16, 3, (5, 6, 2), merged)
        assert encode_maps([got]) == encode_maps([want])


def test_members_of_finds_a_topic_listed_under_another_scene() -> None:
    """A topic that moved is found anywhere in the map; one listed nowhere has no members."""
    m = DomainMap.build(
        7,
        4096,
        bytes(16),
        0,
        (20, 0, 0),
        [(10, [(1, [101, 102]), (5, [501])]), (20, [(2, [201])]), (30, [(5, [555])]), (40, [])],
    )
    assert m.members_of(1, 10) == [101, 102]
    assert m.members_of(2, 20) == [201]
    assert m.members_of(1, 20) == [101, 102]
    assert m.members_of(1, 40) == [101, 102]
    assert m.members_of(2, 10) == [201]
    assert m.members_of(1, 99) == [101, 102]
    assert m.members_of(5, 30) == [555]
    assert m.members_of(5, 10) == [501]
    assert m.members_of(3, 10) == []
    assert m.members_of(3, 99) == []


def test_a_topic_is_not_found_in_the_bytes_of_two_neighbours() -> None:
    """The search past a scene matches whole ids only, not eight bytes across two of them."""
    low, high = 0x1122334455667788, 0x99AABBCCDDEEFF00
    across = int.from_bytes(struct.pack("<QQ", low, high)[4:12], "little")
    m = DomainMap.build(7, 4096, bytes(16), 0, NONE, [(10, [(low, [1]), (high, [2])])])
    decoded = decode_maps(encode_maps([m]))[7]
    assert decoded.members_of(across, 99) == []
    assert decoded.members_of(high, 99) == [2]  # control: found past its scene by a whole id
    again = DomainMap.build(
        7, 4096, bytes(16), 0, NONE, [(10, [(low, [1]), (high, [2])]), (20, [(across, [3])])]
    )
    assert decode_maps(encode_maps([again]))[7].members_of(across, 99) == [3]


@given(domains=_domains(), data=st.data())
def test_any_damaged_byte_or_length_is_refused(
    domains: list[tuple[DomainMap, Scenes]], data: st.DataObject
) -> None:
    """One flipped byte: decode_maps raises ValueError, or a read of the block holding it
    does (every block is read by ``verified``); a cut anywhere or one byte more: decode_maps
    raises ValueError."""
    whole = encode_maps(m for m, _ in domains)
    assert set(decode_maps(whole)) == {m.agent_id for m, _ in domains}
    _read_whole(whole)  # control: every block of the written file checks
    at = data.draw(st.integers(min_value=0, max_value=len(whole) - 1), label="at")
    mask = data.draw(st.integers(min_value=1, max_value=255), label="mask")
    flipped = bytearray(whole)
    flipped[at] ^= mask
    with pytest.raises(ValueError, match="scene map"):
        _read_whole(bytes(flipped))
    cut = data.draw(st.integers(min_value=0, max_value=len(whole) - 1), label="cut")
    with pytest.raises(ValueError, match="scene map"):
        decode_maps(whole[:cut])
    extra = data.draw(st.integers(min_value=0, max_value=255), label="extra")
    with pytest.raises(ValueError, match="scene map"):
        decode_maps(whole + bytes([extra]))


def _read_whole(data: bytes) -> None:
    """Decode a map file and check every block of each domain's map."""
    for m in decode_maps(data).values():
        m.verified()


class _Domain(NamedTuple):
    agent: int
    covered_end: int
    digest: bytes
    seal: int
    current_scene: int
    current_used_at: int
    current_turns: int
    scene_ids: list[int]
    scene_ends: list[int]
    topic_ids: list[int]
    topic_ends: list[int]
    member_ids: list[int]


def _assemble(
    domains: list[_Domain],
    *,
    magic: bytes = b"MHSM",
    version: int = 4,
    count: int | None = None,
    tail: bytes = b"",
) -> bytes:
    """A scene map file written field by field from plain lists, with a correct checksum."""
    body = struct.pack("<4sBI", magic, version, len(domains) if count is None else count)
    for d in domains:
        body += struct.pack(
            "<QQ16sIQqQIII",
            d.agent,
            d.covered_end,
            d.digest,
            d.seal,
            d.current_scene,
            d.current_used_at,
            d.current_turns,
            len(d.scene_ids),
            len(d.topic_ids),
            len(d.member_ids),
        )
        for code, values in (
            ("Q", d.scene_ids),
            ("I", d.scene_ends),
            ("Q", d.topic_ids),
            ("I", d.topic_ends),
            ("Q", d.member_ids),
        ):
            body += struct.pack(f"<{len(values)}{code}", *values)
    body += tail
    return _sealed(body)


def _sealed(body: bytes) -> bytes:
    """``body`` with the checksum of each 4 KiB block, the block size and count, and their
    checksum, as a version 4 map ends."""
    sums = [xxhash.xxh3_64_intdigest(body[at : at + 4096]) for at in range(0, len(body), 4096)]
    listed = struct.pack(f"<{len(sums)}Q", *sums) + struct.pack("<II", 4096, len(sums))
    return body + listed + struct.pack("<Q", xxhash.xxh3_64_intdigest(listed))


A = _Domain(
    agent=5,
    covered_end=4096,
    digest=bytes(range(16)),
    seal=77,
    current_scene=20,
    current_used_at=1_700_000_000_000,
    current_turns=4,
    scene_ids=[10, 20, 30],
    scene_ends=[2, 2, 3],
    topic_ids=[100, 101, 300],
    topic_ends=[2, 3, 3],
    member_ids=[1, 2, 3],
)
B = _Domain(9, 512, b"\xff" * 16, 0, 0, 0, 0, [7], [1], [70], [1], [700])


@pytest.mark.parametrize(
    ("domains", "options"),
    [
        pytest.param([A._replace(scene_ends=[2, 2, 2]), B], {}, id="topic-ends-short"),
        pytest.param([A._replace(topic_ends=[2, 2, 2]), B], {}, id="member-ends-short"),
        pytest.param([A, B._replace(agent=A.agent)], {}, id="agent-twice"),
        pytest.param([A, B], {"version": 1}, id="version-1"),
        pytest.param([A, B], {"version": 2}, id="version-2"),
        pytest.param([A, B], {"version": 3}, id="version-3"),
        pytest.param([A, B], {"version": 5}, id="version-5"),
        pytest.param([A, B], {"magic": b"MHSX"}, id="foreign-magic"),
        pytest.param([A, B], {"count": 3}, id="count-too-high"),
        pytest.param([A, B], {"count": 1}, id="count-too-low"),
        pytest.param([A, B], {"tail": b"\x00"}, id="trailing-byte"),
    ],
)
def test_malformed_content_under_a_good_checksum_is_refused(
    domains: list[_Domain], options: dict[str, Any]
) -> None:
    """The checksum vouches only for the bytes: counts, sums, agents and version are checked too."""
    good = decode_maps(_assemble([A, B]))
    assert set(good) == {A.agent, B.agent}
    assert good[A.agent].scene_ids.tolist() == A.scene_ids
    assert good[A.agent].topics_of(10) == [100, 101]
    assert good[A.agent].members_of(101, 10) == [3]
    assert good[B.agent].members_of(70, 7) == [700]
    with pytest.raises(ValueError, match="scene map") as refused:
        decode_maps(_assemble(domains, **options))
    assert "checksum" not in str(refused.value)


def test_a_falling_member_range_is_refused_when_read() -> None:
    """Decoding leaves the order of the member ends to ``members_of``, which refuses a fall.

    Control: the topics whose ranges hold read as built, so the map was decoded and
    only the read of the falling range is refused.
    """
    decoded = decode_maps(_assemble([A._replace(topic_ends=[3, 2, 3]), B]))
    assert decoded[A.agent].members_of(100, 10) == [1, 2, 3]
    assert decoded[A.agent].members_of(300, 30) == [3]
    with pytest.raises(ValueError, match="scene map: a topic's member ends fall"):
        decoded[A.agent].members_of(101, 10)
    with pytest.raises(ValueError, match="member ends do not add up"):  # as a close checks it
        decoded[A.agent].check()


def test_columns_out_of_order_are_refused_where_a_read_uses_them() -> None:
    """Decoding checks no order (it would cost every scene at each open): a read checks the
    range it uses, and a writer's whole check refuses the map.

    Control: the scenes whose ranges hold read as built, so only the falling range is refused.
    """
    decoded = decode_maps(_assemble([A._replace(scene_ends=[2, 1, 3]), B]))
    assert decoded[A.agent].topics_of(10) == [100, 101]
    assert decoded[A.agent].topics_of(30) == [101, 300]
    with pytest.raises(ValueError, match="scene map: a scene's topic ends fall"):
        decoded[A.agent].topics_of(20)
    with pytest.raises(ValueError, match="topic ends do not add up"):
        decoded[A.agent].check()
    for scene_ids in ([20, 10, 30], [10, 10, 30]):
        unordered = decode_maps(_assemble([A._replace(scene_ids=scene_ids), B]))[A.agent]
        assert unordered.topics_of(30) == [300]  # the lookup's own path still holds
        with pytest.raises(ValueError, match="scene ids are not strictly ascending"):
            unordered.check()


def test_build_refuses_scenes_out_of_ascending_order() -> None:
    """Scenes must come strictly ascending; descending or repeated ids raise ValueError."""
    ordered = DomainMap.build(1, 0, bytes(16), 0, NONE, [(3, [(30, [])]), (8, [])])
    assert ordered.scene_ids.tolist() == [3, 8]
    with pytest.raises(ValueError, match="ascending"):
        DomainMap.build(1, 0, bytes(16), 0, NONE, [(8, []), (3, [(30, [])])])
    with pytest.raises(ValueError, match="ascending"):
        DomainMap.build(1, 0, bytes(16), 0, NONE, [(3, []), (3, [])])


def test_a_damaged_block_is_refused_when_a_read_uses_it() -> None:
    """Decoding checks the heads and scene columns only; a byte damaged among the member ids
    is refused by the read of the topic whose members sit in its block.

    Control: a topic whose members lie in another block reads as built, from the same
    decoded map, and the undamaged file reads the damaged topic as built.
    """
    topics = [(t, list(range(t * 1000, t * 1000 + 600))) for t in range(1, 5)]  # 4.8 KB each
    built = DomainMap.build(3, 4096, bytes(16), 0, NONE, [(10, topics)])
    whole = encode_maps([built])
    last = built.member_ids[-1]
    at = whole.index(struct.pack("<Q", last))  # in the last block of the member ids
    damaged = bytearray(whole)
    damaged[at] ^= 0x40
    decoded = decode_maps(bytes(damaged))[3]
    assert decoded.topics_of(10) == [1, 2, 3, 4]
    assert decoded.members_of(1, 10) == topics[0][1]  # its block is whole
    with pytest.raises(ValueError, match="scene map: checksum mismatch"):
        decoded.members_of(4, 10)
    assert decode_maps(whole)[3].members_of(4, 10) == topics[3][1]
