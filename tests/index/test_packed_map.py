"""PackedMap reads as the map its columns were packed from, before and after writes."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.index.packed_map import PackedMap
from memhop.intmap import IntMap

IDS = st.integers(1, 2**64 - 1)
OPS = st.lists(st.tuples(st.booleans(), IDS, st.integers(0, 2**32)), max_size=30)


@settings(max_examples=150, deadline=None)
@given(
    entries=st.dictionaries(IDS, st.integers(0, 2**64 - 1), max_size=60),
    ops=OPS,
    probes=st.lists(IDS, max_size=20),
    interleaved=st.booleans(),
)
def test_a_packed_map_reads_and_writes_as_the_map_it_was_packed_from(
    entries: dict[int, int],
    ops: list[tuple[bool, int, int]],
    probes: list[int],
    interleaved: bool,
) -> None:
    keys = sorted(entries)
    if interleaved:
        flat = array("Q", [x for k in keys for x in (k, entries[k])])
        packed = PackedMap(memoryview(flat))
    else:
        packed = PackedMap(
            memoryview(array("Q", keys)), memoryview(array("Q", map(entries.get, keys)))
        )
    expected = dict(entries)
    assert packed == expected
    assert packed == IntMap.from_mapping(expected)
    assert list(packed) == keys
    assert dict(packed.items()) == expected
    assert len(packed) == len(expected)
    for key in [*probes, *keys[:5]]:  # absent keys too (a probe is almost never held)
        assert packed.get(key) == expected.get(key)
        assert (key in packed) == (key in expected)
    before, unwritten = dict(expected), packed.copy()
    for put, key, value in ops:  # the first write makes the map its own
        if put:
            packed.put(key, value)
            expected[key] = value
        else:
            assert packed.discard(key) == (key in expected)
            expected.pop(key, None)
    assert packed == expected
    assert list(packed.flat()) == [x for k in sorted(expected) for x in (k, expected[k])]
    assert unwritten == before  # a copy made before the writes does not see them
    written, its_own = packed.copy(), dict(expected)  # nor does a map see its copy's writes
    written.put(1, 7)
    its_own[1] = 7
    for key in keys[:1]:
        written.discard(key)
        its_own.pop(key, None)
    assert written == its_own
    assert packed == expected


def test_pairs_of_odd_length_or_columns_of_two_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="odd length"):
        PackedMap(array("Q", [1, 2, 3]))
    with pytest.raises(ValueError, match="differ in length"):
        PackedMap(array("Q", [1, 2]), array("Q", [1]))
    assert PackedMap(array("Q", [1, 2])).get(1) == 2  # control: a pair reads
