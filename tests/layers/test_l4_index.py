"""L4Index: per-topic content slots, next seq, the retention cutoff, and a naive reference."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.ids import content_id
from memhop.index import l4_rows
from memhop.index.l4 import L4Index
from memhop.intmap import pages as intmap
from memhop.records import ArchiveKind, ArchiveRole, ArchiveSlot, SlotHeader

TOPIC = 77


def slot(
    seq: int,
    *,
    topic: int = TOPIC,
    kind: int = ArchiveKind.UTTERANCE,
    at: int = 0,
    node_seq: int = 0,
) -> ArchiveSlot:
    return ArchiveSlot(
        id_hash=content_id(topic, seq),
        kind=kind,
        seq=seq,
        topic_id=topic,
        node_seq=node_seq,
        created_at=at,
        content=f"{topic}:{seq}",
    )


def test_next_seq_starts_at_three_and_follows_the_highest_slot() -> None:
    index = L4Index()
    assert (index.highest_seq(TOPIC), index.next_seq(TOPIC)) == (0, 3)
    index.put(slot(1))
    assert index.next_seq(TOPIC) == 3
    index.put(slot(2))
    assert (index.highest_seq(TOPIC), index.next_seq(TOPIC)) == (2, 3)
    index.put(slot(7))  # gaps are legal and never renumbered
    assert (index.highest_seq(TOPIC), index.next_seq(TOPIC)) == (7, 8)
    assert index.next_seq(TOPIC + 1) == 3
    index.remove(content_id(TOPIC, 7))
    assert index.next_seq(TOPIC) == 3


def test_a_put_at_a_held_seq_replaces_it_across_kinds() -> None:
    index = L4Index.from_records([slot(3), slot(4)])
    index.put(slot(3, kind=ArchiveKind.EVENT, node_seq=2))
    refs = index.slots_of(TOPIC)
    assert [(r.seq, r.kind) for r in refs] == [(3, ArchiveKind.EVENT), (4, ArchiveKind.UTTERANCE)]
    assert len(index) == 2
    assert index.highest_node_seq(TOPIC) == 2


def test_a_foreign_id_at_a_held_address_keeps_one_entry_per_seq() -> None:
    index = L4Index.from_records([slot(3)])
    odd = ArchiveSlot(id_hash=0xBAD, seq=3, topic_id=TOPIC)
    index.put(odd)
    assert [r.id_hash for r in index.slots_of(TOPIC)] == [0xBAD]
    assert content_id(TOPIC, 3) not in index
    assert len(index) == 1


def test_utterances_and_events_are_seq_ordered_and_kind_tagged() -> None:
    index = L4Index.from_records(
        [
            slot(4, kind=ArchiveKind.EVENT, node_seq=1),
            slot(2),
            slot(3, kind=ArchiveKind.EVENT),
            slot(1),
        ]
    )
    assert [r.seq for r in index.utterances_of(TOPIC)] == [1, 2]
    assert [r.seq for r in index.events_of(TOPIC)] == [3, 4]
    assert [r.seq for r in index.slots_of(TOPIC)] == [1, 2, 3, 4]
    assert index.utterances_of(TOPIC + 1) == []
    assert index.highest_node_seq(TOPIC) == 1
    assert index.highest_node_seq(TOPIC + 1) == 0


def test_created_before_is_strict_and_spans_topics() -> None:
    index = L4Index.from_records(
        [slot(1, at=99), slot(2, at=100), slot(3, at=101), slot(1, topic=5, at=50)]
    )
    assert [i for i, _ in index.created_before(100)] == sorted(
        [content_id(TOPIC, 1), content_id(5, 1)]
    )
    assert [i for i, _ in index.created_before(50)] == []
    assert index.created_before(102) == sorted(
        (content_id(t, s), t) for t, s in ((TOPIC, 1), (TOPIC, 2), (TOPIC, 3), (5, 1))
    )  # each with its topic


def test_remove_topic_and_remove_many() -> None:
    index = L4Index.from_records([slot(1), slot(2), slot(1, topic=5)])
    assert index.remove_topic(TOPIC) == sorted([content_id(TOPIC, 1), content_id(TOPIC, 2)])
    assert index.topics() == [5]
    assert index.remove_many([content_id(5, 1), content_id(5, 1), 123]) == 1
    assert len(index) == 0
    assert index.topics() == []
    assert index == L4Index()


def test_all_slots_read_in_created_at_then_id_order() -> None:
    index = L4Index.from_records([slot(1, at=5), slot(2, at=5), slot(3, at=1)])
    got = [(r.created_at, r.id_hash) for r in index.all_slots()]
    assert got == sorted(got)
    assert got[0] == (1, content_id(TOPIC, 3))


def test_equality_compares_contents_not_history() -> None:
    incremental = L4Index()
    for s in (slot(1), slot(9), slot(2)):
        incremental.put(s)
    incremental.remove(content_id(TOPIC, 9))
    rebuilt = L4Index.from_records([slot(2), slot(1)])
    assert incremental == rebuilt
    rebuilt.put(slot(2, at=1))
    assert incremental != rebuilt
    assert incremental != object()


# ---- against a naive reference ---------------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("put"),
            st.integers(1, 4),  # topic
            st.integers(1, 12),  # seq
            st.sampled_from([ArchiveKind.UTTERANCE, ArchiveKind.EVENT]),
            st.integers(0, 50),  # created_at
        ),
        st.tuples(st.just("remove"), st.integers(1, 4), st.integers(1, 12), st.just(0), st.just(0)),
    ),
    max_size=60,
)


@given(ops, st.integers(0, 51))
def test_index_answers_like_a_naive_reference(
    script: list[tuple[str, int, int, int, int]], cutoff: int
) -> None:
    index = L4Index()
    reference: dict[int, ArchiveSlot] = {}  # id -> latest slot
    _run(script, index, reference)
    _assert_like(index, reference, cutoff)


@given(ops, ops, st.integers(0, 51))
def test_a_bulk_built_index_then_changed_answers_like_the_reference(
    seed: list[tuple[str, int, int, int, int]],
    script: list[tuple[str, int, int, int, int]],
    cutoff: int,
) -> None:
    """Built from records, then changed, with repacks forced and the id maps in pages of two
    entries (splits and merges at every few changes): as the reference."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(l4_rows, "_REPACK_MIN", 0)
        mp.setattr(intmap, "_RECENT_MAX", 1)
        mp.setattr(intmap, "_PAGE_MAX", 2)
        mp.setattr(intmap, "_PAGE_FILL", 2)
        seeded = [slot(seq, topic=t, kind=k, at=at) for op, t, seq, k, at in seed if op == "put"]
        index = L4Index.from_records(seeded)
        reference = {s.id_hash: s for s in seeded}
        _assert_like(index, reference, cutoff)
        _run(script, index, reference)
        _assert_like(index, reference, cutoff)


def _run(
    script: list[tuple[str, int, int, int, int]],
    index: L4Index,
    reference: dict[int, ArchiveSlot],
) -> None:
    for op, topic, seq, kind, at in script:
        if op == "put":
            s = slot(seq, topic=topic, kind=kind, at=at)
            index.put(s)
            reference[s.id_hash] = s
        else:
            gone = content_id(topic, seq)
            assert index.remove(gone) == (reference.pop(gone, None) is not None)


def _assert_like(index: L4Index, reference: dict[int, ArchiveSlot], cutoff: int) -> None:
    assert len(index) == len(reference)
    for topic in range(1, 6):
        mine = sorted((s for s in reference.values() if s.topic_id == topic), key=lambda s: s.seq)
        highest = max((s.seq for s in mine), default=0)
        assert index.highest_seq(topic) == highest
        assert index.next_seq(topic) == max(highest, 2) + 1
        assert index.slots_of(topic) == [SlotHeader.of(s) for s in mine]
        want = [s.seq for s in mine if s.kind == ArchiveKind.UTTERANCE]
        assert [r.seq for r in index.utterances_of(topic)] == want
    by_topic = {t: index.ids_in(t) for t in index.topics()}
    assert index.ids_by_topic() == by_topic
    assert set(by_topic) == {s.topic_id for s in reference.values()}
    old = sorted(i for i, s in reference.items() if s.created_at < cutoff)
    assert [i for i, _ in index.created_before(cutoff)] == old
    assert index == L4Index.from_records(reference.values())


# ---- a bulk build is the same as a put per slot ------------------------------------------

built_rows = st.lists(
    st.tuples(
        st.integers(1, 3),  # topic
        st.integers(1, 5),  # seq
        st.integers(0, 3),  # the topic whose address the record is stored at (0: its own)
        st.sampled_from([ArchiveRole.USER, ArchiveRole.DREAM]),
        st.integers(0, 9),  # created_at
    ),
    max_size=30,
)


@given(built_rows)
def test_a_bulk_build_equals_putting_each_slot_in_turn(
    rows: list[tuple[int, int, int, int, int]],
) -> None:
    """Shuffled seqs, repeated ids and foreign addresses: the same mirror as a put per slot."""
    slots = [
        dataclasses.replace(
            slot(seq, topic=topic, at=at), id_hash=content_id(home or topic, seq), role=role
        )
        for topic, seq, home, role, at in rows
    ]
    incremental = L4Index()
    for s in slots:
        incremental.put(s)
    built = L4Index.from_records(slots)
    assert built == incremental
    assert built.summarised_topics() == incremental.summarised_topics()
    for topic in range(1, 4):
        assert built.slots_of(topic) == incremental.slots_of(topic)
    assert len(built) == len({(s.topic_id, s.seq) for s in incremental.all_slots()})


def test_a_bulk_build_orders_each_topic_by_seq() -> None:
    slots = [slot(5), slot(3, topic=9), slot(1), slot(4), slot(1, topic=9)]
    built = L4Index.from_records(slots)
    assert [r.seq for r in built.slots_of(TOPIC)] == [1, 4, 5]
    assert [r.seq for r in built.slots_of(9)] == [1, 3]
    assert built.highest_seq(TOPIC) == 5
