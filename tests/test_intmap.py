"""IntMap against a plain dict model: every answer equal after any sequence of changes."""

from __future__ import annotations

import functools
from array import array
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memhop import intmap
from memhop.intmap import IntMap

SIZE = 256  # the fake log: frame offsets 1..255, offset 255 and up read as past it
IDS = st.integers(min_value=0, max_value=40)
# (op, id, type): a put names a new frame in the log (offsets 120 and up), as the engine's do.
OPS = st.lists(
    st.tuples(st.sampled_from(["put", "put", "discard"]), IDS, st.integers(0, 3)), max_size=80
)
FIRST_FRAME = 120


def _check(ids: IntMap, model: dict[int, tuple[int, int]], view: bytes) -> None:
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


@given(ops=OPS, seed=SEED)
def test_packed_ids_answer_as_a_dict_does(
    ops: list[tuple[str, int, int]], seed: dict[int, int]
) -> None:
    """Seeded as a snapshot would seed it, then changed: every read equals the dict model's.

    The fold threshold is lowered to 2 so folds happen inside short runs (for
    every map, or for this one: ``fold_min``); the same runs with the real
    threshold fold never, so both paths are compared.
    """
    for fold_min, own in ((2, None), (4096, None), (4096, 2)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(intmap, "_FOLD_MIN", fold_min)
            view = bytearray(SIZE)
            model: dict[int, tuple[int, int]] = {}
            for id_hash, offset in seed.items():
                model[id_hash] = (offset, view[offset] if offset < SIZE else -1)
            ids = IntMap.from_mapping({i: o for i, (o, _) in model.items()}, fold_min=own)
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


@given(ops=OPS, seed=SEED, data=st.data(), part=st.sampled_from([1, 3, 16_384]))
def test_types_read_without_a_lock_take_in_the_changes_made_meanwhile(
    ops: list[tuple[str, int, int]], seed: dict[int, int], data: st.DataObject, part: int
) -> None:
    """A typed question's bytes read aside (``type_read`` .. ``take_types``) while the map
    changes: every typed answer after equals the dict model's.

    Puts of snapshot ids in the meantime change types in place, and must be
    taken in; a fold in the meantime makes the read refused (the next typed
    question reads again). Both fold thresholds are run, so both happen.
    """
    for fold_min in (2, 4096):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(intmap, "_FOLD_MIN", fold_min)
            mp.setattr(intmap, "_TYPE_READ_PART", part)
            view = bytearray(SIZE)
            model = {i: (o, view[o] if o < SIZE else -1) for i, o in seed.items()}
            ids = IntMap.from_mapping(seed)
            out_at = data.draw(st.integers(0, len(ops)), label="read out before op")
            read = ids.type_read() if out_at == len(ops) else None
            pauses: list[int] = []
            for at, (op, id_hash, rec_type) in enumerate(ops):
                if at == out_at:
                    read = ids.type_read()
                if op == "put":
                    offset = FIRST_FRAME + at
                    view[offset] = rec_type
                    ids.put(id_hash, offset, rec_type)
                    model[id_hash] = (offset, rec_type)
                else:
                    ids.discard(id_hash)
                    model.pop(id_hash, None)
            if read is not None:
                # Frames never change once written: reading the bytes now reads them as then.
                types = read.types(bytes(view), SIZE, functools.partial(pauses.append, 1))
                assert len(types) == len(read.offsets)
                assert len(pauses) == max(0, -(-len(read.offsets) // part) - 1)
                ids.take_types(read, types)
            _check(ids, model, bytes(view))


def test_snapshot_pairs_in_map_order_with_repeats_keep_the_last() -> None:
    """Go writes entries in map order: they are sorted, and a repeated id keeps its last offset."""
    flat = array("Q", [9, 8192, 3, 8300, 9, 8400, 5, 0])
    ids = IntMap.from_pairs(flat)
    assert dict(ids.items()) == {3: 8300, 5: 0, 9: 8400}
    assert list(ids) == [3, 5, 9]
    ordered = IntMap.from_pairs(array("Q", [3, 8300, 9, 8400]))  # positive control: sorted
    assert dict(ordered.items()) == {3: 8300, 9: 8400}


@pytest.mark.parametrize("deleted", [False, True])
def test_typed_ids_of_a_large_map_rare_and_common_types_alike(deleted: bool) -> None:
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
    ids = IntMap.from_mapping(entries)
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


# Small values and multiples of 256 side by side make runs of zero bytes across entries.
_ENTRY = st.sampled_from([0, 1, 5, 256, 2**16, 2**56, 2**63, 2**64 - 1]) | st.integers(0, 2**64 - 1)


@given(st.lists(_ENTRY, max_size=40), st.sampled_from(["Q", "I", "H"]))
def test_zeros_are_found_by_their_bytes_where_a_scan_finds_them(
    values: list[int], code: str
) -> None:
    from memhop.intmap_arrays import zeros_in

    packed = array(code, [v % (1 << (8 * array(code).itemsize)) for v in values])
    assert zeros_in(packed) == [i for i, v in enumerate(packed) if v == 0]


def test_a_map_made_from_arrays_keeps_zero_values() -> None:
    """Zero values (a deleted mark in the arrays) go to the dict; the others stay packed."""
    ids = array("Q", [1, 2, 3, 4])
    for values in ([7, 0, 9, 0], [7, 0, 9, 5], [7, 8, 9, 5]):
        m = IntMap.from_arrays(array("Q", ids), array("Q", values))
        assert dict(m.items()) == dict(zip(ids, values, strict=True))
