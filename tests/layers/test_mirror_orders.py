"""The mirrors' kept orders and indexes equal a recomputation from their rows, after any history.

L2Meta keeps each scene's surface, listing and parent index as rows come and
go; L4Index keeps the set of Dream-summarised topics. Hypothesis drives puts,
removes and retargets and checks each against the brute-force answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from memhop.ids import content_id
from memhop.index.l2meta import LISTING_MAX_DEPTH, L2Meta, ListingRow
from memhop.index.l4 import L4Index
from memhop.records import ArchiveKind, ArchiveRole, SlotHeader, TopicSlot
from memhop.root.provenance import TURN, of_row, of_scene

SCENES = (11, 22, 33)
IDS = st.integers(1, 12)

_topic = st.builds(
    TopicSlot,
    id=IDS,
    scene_id=st.sampled_from(SCENES),
    parent_id=st.none() | IDS,
    depth=st.integers(1, 4),
    user_timestamp=st.integers(0, 5),  # few stamps: ties are ordered by depth, then id
)
_op = st.one_of(
    st.tuples(st.just("put"), _topic),
    st.tuples(st.just("remove"), st.lists(IDS, max_size=3)),
    st.tuples(st.just("retarget"), st.sampled_from(SCENES), st.sampled_from(SCENES)),
)


def children_of(rows: Sequence[TopicSlot]) -> dict[int, list[TopicSlot]]:
    """Parent id -> the rows among ``rows`` parented to it (the reference the mirrors meet)."""
    children: dict[int, list[TopicSlot]] = {}
    for row in rows:
        if row.parent_id is not None:
            children.setdefault(row.parent_id, []).append(row)
    return children


def _apply(meta: L2Meta, op: tuple[object, ...]) -> None:
    if op[0] == "put":
        assert isinstance(op[1], TopicSlot)
        meta.put(op[1])
    elif op[0] == "remove":
        assert isinstance(op[1], list)
        meta.remove(op[1])
    else:
        assert isinstance(op[1], int)
        assert isinstance(op[2], int)
        meta.retarget(op[1], op[2])


@given(ops=st.lists(_op, max_size=30))
def test_scene_orders_equal_a_sort_of_the_scene_rows(ops: list[tuple[object, ...]]) -> None:
    meta = L2Meta()
    for op in ops:
        _apply(meta, op)
    held = 0
    for scene in SCENES:
        rows = meta.topics_of_scene(scene)
        held += len(rows)
        surface = sorted((t for t in rows if t.depth == 1), key=lambda t: (t.user_timestamp, t.id))
        assert meta.surface(scene) == surface
        assert meta.surface_count(scene) == len(surface)
        listed = sorted(
            (t for t in rows if t.depth <= LISTING_MAX_DEPTH),
            key=lambda t: (t.user_timestamp, t.depth, t.id),
        )
        counts = {p: len(k) for p, k in children_of(listed).items()}
        assert meta.listing(scene) == [ListingRow(t, counts.get(t.id, 0)) for t in listed]
        kids = children_of(rows)
        want = {
            p: sorted(k, key=lambda t: t.id)
            for p, k in kids.items()
            if p in meta.scene_row_ids(scene)
        }
        got = {p: sorted(k, key=lambda t: t.id) for p, k in meta.children_in_scene(scene).items()}
        assert got == want
        assert set(meta.scene_row_ids(scene)) == {t.id for t in rows}
    assert held == len(meta)  # every row sits in exactly one scene
    # A mirror built afresh from the same rows answers the same.
    rebuilt = L2Meta.from_topics(t for s in SCENES for t in meta.topics_of_scene(s))
    assert rebuilt == meta
    assert all(rebuilt.listing(s) == meta.listing(s) for s in SCENES)


_ref = st.builds(
    SlotHeader,
    id_hash=st.just(0),
    topic_id=IDS,
    seq=st.integers(1, 3),
    kind=st.sampled_from([ArchiveKind.UTTERANCE, ArchiveKind.EVENT]),
    content_type=st.just(0),
    role=st.sampled_from([ArchiveRole.USER, ArchiveRole.DREAM]),
    node_seq=st.just(0),
    created_at=st.just(0),
)


def _addressed(ref: SlotHeader, foreign: bool) -> SlotHeader:
    address = content_id(ref.topic_id + (100 if foreign else 0), ref.seq)
    return SlotHeader(address, *tuple(ref.__getattribute__(f) for f in SlotHeader._fields[1:]))


@given(
    ops=st.lists(st.tuples(st.booleans(), _ref, st.booleans()), max_size=25),
    rows=st.lists(_topic, max_size=8, unique_by=lambda t: t.id),
)
def test_provenance_of_a_scene_equals_a_lookup_per_row(
    ops: list[tuple[bool, SlotHeader, bool]], rows: list[TopicSlot]
) -> None:
    """Summarised topics are tracked through puts and removes, foreign addresses included."""
    contents = L4Index()
    for put, ref, foreign in ops:
        entry = _addressed(ref, foreign)
        if put:
            contents.put(entry)
        else:
            contents.remove(entry.id_hash)
    meta = L2Meta.from_topics(rows)
    for scene in SCENES:
        listed = meta.topics_of_scene(scene)
        kids = children_of(listed)
        want = {}
        for row in listed:
            made = of_row(contents, row, kids.get(row.id, ()))
            if made is not TURN:
                want[row.id] = made
        assert of_scene(meta, contents, scene) == want


def test_a_summarised_row_and_a_parent_are_dream_rows_and_the_rest_turn_rows() -> None:
    fused, member, plain, summarised = 1, 2, 3, 4
    meta = L2Meta.from_topics(
        [
            TopicSlot(id=fused, scene_id=11, depth=1),
            TopicSlot(id=member, scene_id=11, parent_id=fused, depth=2),
            TopicSlot(id=plain, scene_id=11, depth=1),
            TopicSlot(id=summarised, scene_id=11, depth=1),
        ]
    )
    contents = L4Index()
    summary = SlotHeader(content_id(summarised, 1), summarised, 1, 0, 0, ArchiveRole.DREAM, 0, 0)
    contents.put(summary)
    contents.put(SlotHeader(content_id(plain, 1), plain, 1, 0, 0, ArchiveRole.USER, 0, 0))
    made = of_scene(meta, contents, 11)
    assert set(made) == {fused, summarised}  # plain and member are turn rows
    assert made[fused].derived_from == (member,)
    contents.remove(summary.id_hash)
    assert set(of_scene(meta, contents, 11)) == {fused}  # the summary aged out
