"""The compiled row store (``memhop/index/_rows.c``) against the Python one
(``SlotRows._put_row``): the same columns after the same rows, or False (nothing
written) for a row the Python store must take, which then refuses it as an array does.

Skipped where the install had no C compiler, unless ``MEMHOP_REQUIRE_KERNEL=1`` (CI sets
it), which makes the store's absence a failure.
"""

from __future__ import annotations

import os
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.index import l4_rows
from memhop.index.l4 import L4Index
from memhop.records import ArchiveKind, ArchiveRole, SlotHeader

if l4_rows._compiled_store is None and os.environ.get("MEMHOP_REQUIRE_KERNEL") != "1":
    pytest.skip("the compiled row store was not built here", allow_module_level=True)

from memhop.index._rows import store  # after the skip: absent without a compiler

U64 = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 1, 2**30, 2**63, 2**64 - 1]))
ROWS = st.builds(
    SlotHeader,
    id_hash=U64,
    topic_id=U64,
    seq=U64,
    kind=st.one_of(st.integers(0, 255), st.sampled_from(list(ArchiveKind))),
    content_type=st.integers(0, 255),
    role=st.one_of(st.integers(0, 255), st.sampled_from(list(ArchiveRole))),
    node_seq=st.integers(0, 2**32 - 1),
    created_at=st.integers(-(2**63), 2**63 - 1),
)
# Each value one past what its column holds (or of another type): the row is left to Python.
UNFIT = [
    ("id_hash", 2**64),
    ("id_hash", -1),
    ("kind", 256),
    ("role", -1),
    ("node_seq", 2**32),
    ("created_at", 2**63),
    ("created_at", -(2**63) - 1),
    ("seq", 1.5),
]


def _rows(rows: list[SlotHeader], *, compiled: bool) -> L4Index:
    index = L4Index()
    for n, row in enumerate(rows):
        at = index._count
        if at == len(index._next):  # grown as ``_append_row`` grows it
            for column in index._columns:
                column.frombytes(bytes(64 * column.itemsize))
        if compiled:
            assert store(index._columns, at, *row, n)
        else:
            index._put_row(at, row, n)
        index._count += 1
    return index


@settings(max_examples=200)
@given(rows=st.lists(ROWS, min_size=1, max_size=80))
def test_the_compiled_store_writes_the_python_stores_columns(rows: list[SlotHeader]) -> None:
    """Every column equal, byte for byte, past 64 rows too (a grown column); each row
    reads back as given (the positive control that the rows were written at all)."""
    built, python = _rows(rows, compiled=True), _rows(rows, compiled=False)
    for mine, theirs in zip(built._columns, python._columns, strict=True):
        assert mine.tobytes() == theirs.tobytes()
    assert [tuple(built._ref(at)) for at in range(len(rows))] == [tuple(r) for r in rows]
    assert list(built._next[: len(rows)]) == list(range(len(rows)))


@pytest.mark.parametrize(("field", "value"), UNFIT)
def test_a_value_that_does_not_fit_is_left_to_python_with_nothing_written(
    field: str, value: object
) -> None:
    index = L4Index()
    for column in index._columns:
        column.frombytes(bytes(4 * column.itemsize))
    good = SlotHeader(7, 8, 9, 1, 0, 1, 3, 1_700_000_000_000)
    assert store(index._columns, 0, *good, 5)  # the control: the same row, fitting, is stored
    before = [column.tobytes() for column in index._columns]
    bad = good._replace(**{field: value})
    assert store(index._columns, 1, *bad, 5) is False
    assert [column.tobytes() for column in index._columns] == before
    with pytest.raises((OverflowError, TypeError)):  # what an array says of the value
        index._put_row(1, bad, 5)


def test_a_row_past_the_columns_or_a_wrong_column_is_left_to_python() -> None:
    index = L4Index()
    for column in index._columns:
        column.frombytes(bytes(2 * column.itemsize))
    row = SlotHeader(1, 2, 3, 1, 0, 1, 0, 5)
    assert store(index._columns, 1, *row, 0)  # the control: the last row there
    assert store(index._columns, 2, *row, 0) is False  # no row 2: the columns hold two
    assert store(index._columns, -1, *row, 0) is False
    wrong = (*index._columns[:3], array("H", bytes(4)), *index._columns[4:])
    assert store(wrong, 0, *row, 0) is False
    with pytest.raises(TypeError):
        store(index._columns[:8], 0, *row, 0)
