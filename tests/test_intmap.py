"""IntMap against a plain dict model: every answer equal after any sequence of changes.

Every test runs on both cores: the Python one (``PyIntMap``) and the compiled one, the
``IntMap`` an install with a C compiler uses (skipped where it was not built, unless
``MEMHOP_REQUIRE_KERNEL=1``, which CI sets, makes its absence a failure).
"""

from __future__ import annotations

import os
from array import array
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop.intmap import COMPILED, NEW, UNTYPED
from memhop.intmap import pages as intmap
from memhop.intmap.pages import IntMap, PyIntMap

REQUIRED = os.environ.get("MEMHOP_REQUIRE_KERNEL") == "1"
CORES = [
    pytest.param(PyIntMap, id="python"),
    pytest.param(
        IntMap,
        id="compiled",
        marks=pytest.mark.skipif(not (COMPILED or REQUIRED), reason="no compiled core here"),
    ),
]
Map = type[IntMap] | type[PyIntMap]

SIZE = 256  # the fake log: frame offsets 1..255, offset 255 and up read as past it
IDS = st.integers(min_value=0, max_value=40)
# (op, id, type): a put names a new frame in the log (offsets 120 and up), as the engine's do.
OPS = st.lists(
    st.tuples(st.sampled_from(["put", "put", "discard"]), IDS, st.integers(0, 3)), max_size=80
)
FIRST_FRAME = 120


def _check(ids: IntMap | PyIntMap, model: dict[int, tuple[int, int]], view: bytes) -> None:
    offsets = {i: o for i, (o, _) in model.items()}
    assert dict(ids.items()) == offsets
    assert sorted(ids.unordered_items()) == sorted(offsets.items())  # each once, in any order
    assert list(ids) == sorted(offsets)
    assert list(ids.values()) == [offsets[i] for i in sorted(offsets)]
    assert len(ids) == len(offsets)
    for id_hash in range(42):
        assert ids.get(id_hash) == offsets.get(id_hash)
        assert (id_hash in ids) == (id_hash in offsets)
    for rec_type in range(4):
        # The type is the frame's byte at its offset; an offset past the log has none.
        typed = sorted(i for i, (o, _) in model.items() if o < SIZE and view[o] == rec_type)
        assert ids.ids_of_type(rec_type, view, SIZE) == typed
    for step in (2, 5):
        assert not Counter(ids.sample(step)) - Counter(offsets.values())  # drawn from the values
    assert sorted(ids.sample(1)) == sorted(offsets.values())  # a step of 1 takes every one
    flat = ids.flat()
    assert list(zip(flat[0::2], flat[1::2], strict=True)) == sorted(offsets.items())


# A snapshot may name any offset: 0 (a damaged one) and past the log (255 and up) included.
SEED = st.dictionaries(
    IDS, st.one_of(st.integers(0, FIRST_FRAME - 1), st.integers(SIZE, 300)), max_size=30
)


# Page sizes (max, fill, merge) and recent ids held before they go to their pages: pages
# of one or two entries split and merge at almost every change, a recent bound of 0 or 1
# sends every new id to its page at once; the real sizes never do in these short runs,
# so every path is compared.
PAGES = [(1, 1, 1, 0), (2, 2, 2, 1), (3, 2, 2, 3), (4, 3, 2, 0), (1_024, 768, 128, 4_096)]


@pytest.mark.parametrize("cls", CORES)
@given(ops=OPS, seed=SEED)
def test_packed_ids_answer_as_a_dict_does(
    cls: Map, ops: list[tuple[str, int, int]], seed: dict[int, int]
) -> None:
    """Seeded as a snapshot would seed it, then changed: every read equals the dict model's,
    whatever the page sizes (tiny ones split and merge pages within a short run)."""
    for page_max, fill, merge, recent in PAGES:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(intmap, "_RECENT_MAX", recent)
            mp.setattr(intmap, "_PAGE_MAX", page_max)
            mp.setattr(intmap, "_PAGE_FILL", fill)
            mp.setattr(intmap, "_PAGE_MERGE", merge)
            view = bytearray(SIZE)
            model: dict[int, tuple[int, int]] = {}
            for id_hash, offset in seed.items():
                model[id_hash] = (offset, view[offset] if offset < SIZE else -1)
            ids = cls.from_mapping({i: o for i, (o, _) in model.items()})
            _check(ids, model, bytes(view))
            for at, (op, id_hash, rec_type) in enumerate(ops):
                if op == "put":
                    offset = FIRST_FRAME + at
                    view[offset] = rec_type  # the frame written there carries its type
                    ids.put(id_hash, offset, rec_type)
                    model[id_hash] = (offset, rec_type)
                else:
                    assert ids.discard(id_hash) == (model.pop(id_hash, None) is not None)
                _check(ids, model, bytes(view))


@pytest.mark.parametrize("cls", CORES)
@given(ops=OPS, seed=SEED, data=st.data(), budget=st.sampled_from([1, 3, 16_384]))
def test_tags_read_a_few_at_a_time_between_changes_answer_as_the_frames_say(
    cls: Map,
    ops: list[tuple[str, int, int]],
    seed: dict[int, int],
    data: st.DataObject,
    budget: int,
) -> None:
    """A typed question's tags read a budget at a time (``type_some``), with puts and
    deletes between the steps: every typed answer after equals the dict model's, and the
    steps end (each reads at least one untyped page)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(intmap, "_RECENT_MAX", 1)
        mp.setattr(intmap, "_PAGE_MAX", 2)
        mp.setattr(intmap, "_PAGE_FILL", 2)
        mp.setattr(intmap, "_PAGE_MERGE", 2)
        view = bytearray(SIZE)
        model = {i: (o, view[o] if o < SIZE else -1) for i, o in seed.items()}
        ids = cls.from_mapping(seed)  # its pages untyped, as a snapshot's are
        steps = 0
        for at, (op, id_hash, rec_type) in enumerate(ops):
            if data.draw(st.booleans(), label="a step of reading tags first"):
                steps += 1
                ids.type_some(bytes(view), SIZE, budget)
            if op == "put":
                offset = FIRST_FRAME + at
                view[offset] = rec_type
                ids.put(id_hash, offset, rec_type)
                model[id_hash] = (offset, rec_type)
            else:
                ids.discard(id_hash)
                model.pop(id_hash, None)
        rounds = 0
        while not ids.type_some(bytes(view), SIZE, budget):
            rounds += 1
            assert rounds <= len(ids) + 1  # every step types at least one page
        _check(ids, model, bytes(view))


@pytest.mark.parametrize("cls", CORES)
def test_a_put_costs_the_same_moves_whatever_the_map_holds(cls: Map) -> None:
    """A new id moves one page's entries at most when it goes to its page: pages stay within
    their bounds as a map grows to 50,000 random ids, the recent ones wait in a bounded
    dict, and a read of each id answers (a positive control)."""
    import random

    rng = random.Random(7)
    ids = cls()
    keys = [rng.getrandbits(64) for _ in range(50_000)]
    for n, key in enumerate(keys):
        ids.put(key, n + 1)
    sizes = [len(page) for page in ids._ids]
    assert max(sizes) <= intmap._PAGE_MAX
    assert len(sizes) > 50_000 // intmap._PAGE_MAX  # many pages, not one grown array
    assert len(ids._new) <= intmap._RECENT_MAX
    assert all(ids.get(key) == n + 1 for n, key in enumerate(keys))


@pytest.mark.parametrize("cls", CORES)
def test_snapshot_pairs_in_map_order_with_repeats_keep_the_last(cls: Map) -> None:
    """Go writes entries in map order: they are sorted, and a repeated id keeps its last offset."""
    flat = array("Q", [9, 8192, 3, 8300, 9, 8400, 5, 0])
    ids = cls.from_pairs(flat)
    assert dict(ids.items()) == {3: 8300, 5: 0, 9: 8400}
    assert list(ids) == [3, 5, 9]
    ordered = cls.from_pairs(array("Q", [3, 8300, 9, 8400]))  # positive control: sorted
    assert dict(ordered.items()) == {3: 8300, 9: 8400}


@pytest.mark.parametrize("cls", CORES)
@pytest.mark.parametrize("deleted", [False, True])
def test_typed_ids_of_a_large_map_rare_and_common_types_alike(cls: Map, deleted: bool) -> None:
    """20,000 entries in the arrays: a rare type (found a few at a time) and a common one
    (taken in one pass) both answer as the entries say, with deletes and an entry past the
    log (no type) among them."""
    size = 40_000
    view = bytearray(size)
    entries = {}
    for n in range(20_000):
        offset = 8 + n
        view[offset] = 7 if n % 1_000 == 3 else 2  # 20 of type 7, the rest type 2
        entries[n * 3 + 1] = offset
    entries[999_999] = size + 5  # past the log: no type
    ids = cls.from_mapping(entries)
    gone = set(list(entries)[::7]) if deleted else set()
    for id_hash in gone:
        ids.discard(id_hash)
    for rec_type in (7, 2, 0):
        want = sorted(
            i for i, o in entries.items() if i not in gone and o < size and view[o] == rec_type
        )
        assert ids.ids_of_type(rec_type, bytes(view), size) == want
    assert len(ids.ids_of_type(7, bytes(view), size)) == (17 if deleted else 20)  # a control
    assert ids.ids_of_type(0x100, bytes(view), size) == []  # no frame's type byte: asked of none


@pytest.mark.parametrize("cls", CORES)
def test_a_map_made_from_arrays_keeps_zero_values(cls: Map) -> None:
    """Zero values are values like any other, wherever they stand."""
    ids = array("Q", [1, 2, 3, 4])
    for values in ([7, 0, 9, 0], [7, 0, 9, 5], [7, 8, 9, 5]):
        m = cls.from_arrays(array("Q", ids), array("Q", values))
        assert dict(m.items()) == dict(zip(ids, values, strict=True))


@pytest.mark.parametrize("cls", CORES)
def test_a_put_answers_the_tag_the_id_had(cls: Map) -> None:
    """A new id answers NEW, a live one the tag it had (recent or in its page), and one in a
    page built without tags UNTYPED; each put leaves the tag it was given, so the answers
    are the map's own record of types, not a constant."""
    fresh = cls()
    assert fresh.put(7, 100, 0x03) == NEW
    assert fresh.put(7, 200, 0x05) == 0x03  # a recent id: its tag from the dict
    assert fresh.put(7, 300, 0x05) == 0x05
    for i in range(intmap._RECENT_MAX + 1):  # settles every recent id into its page
        fresh.put(1_000 + i, i, 0x02)
    assert 7 not in fresh._new
    assert fresh.put(7, 400, 0x09) == 0x05  # now from its page
    assert fresh.put(1_000, 1, 0x02) == 0x02
    untagged = cls.from_mapping({1: 10, 2: 20})
    assert untagged.put(1, 11, 0x04) == UNTYPED
    assert untagged.put(3, 30, 0x04) == NEW
    assert (untagged[1], untagged[3]) == (11, 30)


@pytest.mark.parametrize("cls", CORES)
def test_a_settle_splits_a_page_until_every_part_fits(
    cls: type[IntMap], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many new ids into one page at once: it is merged, then halved until each part holds
    at most the page limit, every id in order between its page's bounds."""
    monkeypatch.setattr(intmap, "_PAGE_MAX", 4)
    monkeypatch.setattr(intmap, "_RECENT_MAX", 1_000)
    m = cls()
    for i in range(99, 0, -1):
        m.put(i * 7, i, 3)
    assert len(m._ids) == 1  # all still recent: the control for the split below
    m._settle()
    sizes = [len(p) for p in m._ids]
    assert max(sizes) <= 4
    assert sum(sizes) == 99
    bounds = [*m._firsts.tolist(), 2**64]
    for page, ids in enumerate(m._ids):
        assert ids.tolist() == sorted(ids)
        assert all(bounds[page] <= i < bounds[page + 1] for i in ids)
    assert dict(m.items()) == {i * 7: i for i in range(1, 100)}


@pytest.mark.parametrize("cls", CORES)
def test_a_settle_refuses_a_value_past_64_bits_and_keeps_every_id(cls: type[IntMap]) -> None:
    """A recent value no page can hold is refused before anything moves: the other recent
    ids stay where they were, and settle once the value fits (the control)."""
    m = cls()
    m.put(5, 50, 1)
    m._settle()
    m.put(7, 70, 1)
    m.put(9, 2**64, 1)
    before = ([p.tolist() for p in m._ids], dict(m._new))
    with pytest.raises(OverflowError, match="u64"):
        m._settle()
    assert ([p.tolist() for p in m._ids], dict(m._new)) == before
    m.put(9, 90, 1)
    m._settle()
    assert (m.get(5), m.get(7), m.get(9), dict(m._new)) == (50, 70, 90, {})
