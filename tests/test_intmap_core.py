"""The compiled IntMap core (``memhop/intmap/_core.c``) against the Python one, call by call.

``tests/test_intmap.py`` runs every IntMap test on both cores against a dict; this file
compares the two cores' own answers (``put``'s tags included) on ids a dict model does not
stress (hashes over 64 bits, clusters, the ends of the range, values past 55 bits), and
checks that the compiled core refuses state it cannot read instead of reading past it.

Skipped where the install had no C compiler, unless ``MEMHOP_REQUIRE_KERNEL=1`` (CI sets
it), which makes the core's absence a failure.
"""

from __future__ import annotations

import gc
import os
import weakref
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.intmap import COMPILED, core
from memhop.intmap import pages as intmap
from memhop.intmap.pages import IntMap, PyIntMap

if not COMPILED and os.environ.get("MEMHOP_REQUIRE_KERNEL") != "1":
    pytest.skip("the compiled IntMap core was not built here", allow_module_level=True)

from memhop.intmap import _core  # after the skip: absent without a compiler

TOP = 2**64 - 1
# Ids as the maps get them (hashes spread over 64 bits), and as they do not: a cluster, the
# ends of the range, small ints, so a guess in proportion is sometimes far off.
IDS = st.one_of(
    st.integers(0, TOP),
    st.integers(2**40, 2**40 + 64),
    st.sampled_from([0, 1, 2, TOP - 1, TOP, 2**63, 2**63 + 1, 2**30 - 1, 2**30, 2**60]),
    st.integers(0, 300),
)
VALUES = st.one_of(st.integers(0, 2**32), st.integers(2**55 - 2, TOP))  # past 55 bits too
TAGS = st.integers(0, 0x1FF)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), IDS, VALUES, TAGS),
        st.tuples(st.just("get"), IDS, st.just(0), st.just(0)),
        st.tuples(st.just("discard"), IDS, st.just(0), st.just(0)),
        st.tuples(st.just("settle"), st.just(0), st.just(0), st.just(0)),
    ),
    max_size=200,
)


def _state(m: IntMap | PyIntMap) -> tuple[object, ...]:
    return (
        m._firsts.tolist(),
        [p.tolist() for p in m._ids],
        [p.tolist() for p in m._offs],
        [None if p is None else p.tolist() for p in m._types],
        dict(m._new),
        m._count,
    )


def test_the_cores_name_the_same_constants() -> None:
    assert (_core.NEW, _core.UNTYPED, _core.TAG_BITS) == (core.NEW, core.UNTYPED, core.TAG_BITS)
    assert IntMap is not PyIntMap
    assert issubclass(IntMap, _core.Core)


@settings(max_examples=150, deadline=None)
@given(
    ops=OPS,
    seed=st.dictionaries(IDS, st.integers(0, TOP), max_size=120),
    sizes=st.sampled_from([(2, 2, 2, 0), (4, 3, 2, 2), (64, 48, 8, 16), (1_024, 768, 128, 512)]),
    typed=st.booleans(),
)
def test_the_compiled_core_answers_as_the_python_core_does(
    ops: list[tuple[str, int, int, int]],
    seed: dict[int, int],
    sizes: tuple[int, int, int, int],
    typed: bool,
) -> None:
    """Seeded (with tags or, as a snapshot's pages, without), then changed: every answer of
    the compiled core, ``put``'s tag included, and its whole state after, equal the
    Python core's, whatever the page sizes."""
    page_max, fill, merge, recent = sizes
    with pytest.MonkeyPatch.context() as mp:
        for name, value in (("_PAGE_MAX", page_max), ("_PAGE_FILL", fill)):
            mp.setattr(intmap, name, value)
        mp.setattr(intmap, "_PAGE_MERGE", merge)
        mp.setattr(intmap, "_RECENT_MAX", recent)
        ids = array("Q", sorted(seed))
        values = array("Q", (seed[i] for i in ids))
        tags = array("H", (v % 7 for v in values)) if typed else None
        maps = [cls.from_arrays(ids, values, tags) for cls in (PyIntMap, IntMap)]
        for op, id_hash, value, tag in ops:
            if op == "put":
                answers = [m.put(id_hash, value, tag) for m in maps]
            elif op == "get":
                answers = [(m.get(id_hash), m.get(id_hash, -7), id_hash in m) for m in maps]
            elif op == "discard":
                answers = [m.discard(id_hash) for m in maps]
            else:
                answers = [m._settle() for m in maps]
            assert answers[0] == answers[1], (op, id_hash)
        python, compiled = maps
        assert _state(compiled) == _state(python)
        assert len(compiled) == len(python)
        assert dict(compiled.items()) == dict(python.items())
        for id_hash in python:  # every live id answers, and a missing key raises alike
            assert compiled[id_hash] == python[id_hash]
        with pytest.raises(KeyError):
            compiled[next(i for i in range(len(python) + 1) if i not in python)]  # one absent


@pytest.mark.parametrize(
    "spread",
    [
        [i * i for i in range(1, 3_000)],  # denser at the bottom
        [TOP - i * i for i in range(3_000, 0, -1)],  # denser at the top
        [2**k for k in range(64)] + list(range(3, 2_000)),  # a cluster and powers of two
        [(i * 0x9E3779B97F4A7C15) % 2**64 for i in range(3_000)],  # as hashes are
    ],
    ids=["low", "high", "powers", "hashes"],
)
def test_every_id_is_found_however_unevenly_the_ids_spread(spread: list[int]) -> None:
    """The search's first guess assumes evenly spread ids: on spreads it guesses badly,
    every id (and every id beside it that is not one) is still answered as a dict does."""
    entries = {id_hash: n for n, id_hash in enumerate(sorted(set(spread)))}
    m = IntMap.from_mapping(entries)
    assert len(m._ids) > 1  # several pages, each searched
    for id_hash, n in entries.items():
        assert m.get(id_hash) == n
        for near in (id_hash - 1, id_hash + 1):
            if 0 <= near <= TOP:
                assert m.get(near) == entries.get(near)
    assert m.get(-1) is None
    assert m.get(TOP + 1) is None
    assert (-1 in m, "x" in m, 2**70 in m) == (False, False, False)  # type: ignore[comparison-overlap]


def test_state_it_cannot_read_is_refused_not_read() -> None:
    """Fields of the wrong type, pages of the wrong item size and a map never initialised
    each raise an error naming the problem; the same map with its own state answers (the
    positive control)."""
    m = IntMap()
    m.put(5, 50, 1)
    m._settle()
    assert m.get(5) == 50
    with pytest.raises(TypeError, match="_firsts must be an array"):
        m._firsts = [0]  # type: ignore[assignment]
    with pytest.raises(TypeError, match="_new must be a dict"):
        m._new = []  # type: ignore[assignment]
    with pytest.raises(TypeError, match="_ids must be a list"):
        m._ids = (array("Q"),)  # type: ignore[assignment]
    assert m.get(5) == 50  # refused: the state is unchanged
    pages = m._ids
    m._ids = [array("H", [5])]
    with pytest.raises(TypeError, match="8-byte items"):
        m.get(5)
    m._ids = [None]  # type: ignore[list-item]
    with pytest.raises(TypeError):
        m.get(5)
    m._ids = []
    with pytest.raises(ValueError, match="do not match their bounds"):
        m.get(5)
    m._ids = pages
    assert m.get(5) == 50
    assert m.put(5, 51, 2) == 1
    with pytest.raises(OverflowError):
        m.put(5, -1, 2)  # a value must be a u64, as an array's item must
    with pytest.raises(OverflowError):
        m.put(5, 52, 2**16)  # a tag in a page must fit its 16 bits
    with pytest.raises(TypeError):
        m.get("five")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.get()  # type: ignore[call-arg]
    bare = IntMap.__new__(IntMap)  # no __init__: no state
    with pytest.raises(AttributeError, match="not set"):
        bare.get(5)
    with pytest.raises(AttributeError, match="not set"):
        bare.put(5, 1)


class _Witness:
    """Something whose end a weak reference can see."""


def test_a_cycle_through_a_map_is_collected() -> None:
    """The core shows the collector what it holds: a map whose state holds the map itself
    is freed by a collection, not kept forever (and not before it: the positive control)."""
    gc.collect()
    m = IntMap()
    witness = _Witness()
    ref = weakref.ref(witness)
    m._ids.append(m)  # type: ignore[arg-type]  # a cycle: the map -> its pages -> the map
    m._ids.append(witness)  # type: ignore[arg-type]
    del witness, m
    assert ref() is not None  # the cycle keeps it until a collection
    gc.collect()
    assert ref() is None
