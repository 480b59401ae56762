"""The compiled ranking kernel (``memhop/index/_bm25.c``): the same answers as MaxScore in
Python, bit for bit, and a refusal (not a crash) for columns it cannot read.

Skipped where the install had no C compiler, unless ``MEMHOP_REQUIRE_KERNEL=1`` (CI sets
it), which makes the kernel's absence a failure.
"""

from __future__ import annotations

import os
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.index.kernel import COMPILED
from memhop.index.recall import DocFilter, RecallIndex

if not COMPILED and os.environ.get("MEMHOP_REQUIRE_KERNEL") != "1":
    pytest.skip("the ranking kernel was not built here (no C compiler)", allow_module_level=True)

from memhop.index._bm25 import kept, postings_kept, top  # after the skip: absent without a compiler

WORDS = st.sampled_from([f"w{i}" for i in range(12)])
DOCUMENT = st.tuples(st.integers(0, 3), st.integers(0, 50), st.lists(WORDS, max_size=30))


def test_the_kernel_was_built() -> None:
    assert COMPILED  # reached only where it is required or present


@settings(max_examples=80, deadline=None)
@given(
    docs=st.lists(DOCUMENT, max_size=60),
    removed=st.sets(st.integers(0, 59), max_size=20),
    queries=st.lists(st.lists(WORDS, min_size=1, max_size=6), min_size=1, max_size=5),
    limit=st.integers(1, 8),
    scene=st.integers(1, 3),  # a scene to keep (0 would keep any)
    packed=st.booleans(),
)
def test_the_kernel_answers_as_maxscore_does_bit_for_bit(
    docs: list[tuple[int, int, list[str]]],
    removed: set[int],
    queries: list[list[str]],
    limit: int,
    scene: int,
    packed: bool,
) -> None:
    kernel, python = RecallIndex(compiled=True), RecallIndex(compiled=False)
    for index in (kernel, python):
        for i, (scene_id, at, terms) in enumerate(docs):
            index.put((i % 2, i), scene_id, at, terms)
        for i in removed:  # dead slots stay in the postings until a repack
            index.remove((i % 2, i))
    if packed:  # read back from its packed columns, as after a reopen
        kernel = RecallIndex.unpacked(kernel.packed(), compiled=True)
    for query in queries:
        assert kernel.search(query, limit) == python.search(query, limit)
        in_scene = kernel.search(query, limit, DocFilter(scene_id=scene))
        assert in_scene == python.search(query, limit, DocFilter(scene_id=scene))
        span = DocFilter(scene_id=scene, start=10, end=40)  # and a span of their times
        assert kernel.search(query, limit, span) == python.search(query, limit, span)
        assert all(kernel.scene_of(hit.key) == scene for hit in in_scene)
    # control: a word every live document holds is found, so equality is not of two empties
    live = [i for i in range(len(docs)) if i not in removed and docs[i][2]]
    if live:
        word = docs[live[0]][2][0]
        assert kernel.search([word], limit) == python.search([word], limit) != []


def test_a_filter_that_passes_few_still_finds_them() -> None:
    # 200 documents score above the only two the filter passes: the kernel reads the
    # filter from the documents' own columns, so the two are ranked among themselves.
    index = RecallIndex(compiled=True)
    for i in range(200):
        index.put((0, i), 1, i, ["tea", "tea", "cup"])
    index.put((0, 500), 2, 1, ["tea", "saucer", "plate", "spoon"])
    index.put((0, 501), 2, 2, ["tea", "saucer", "plate", "spoon", "fork"])
    hits = index.search(["tea"], 2, DocFilter(scene_id=2))
    assert [hit.key for hit in hits] == [(0, 500), (0, 501)]
    assert len(index.search(["tea"], 2)) == 2  # control: unfiltered, scene 1's win
    assert all(hit.key[1] < 200 for hit in index.search(["tea"], 2))


def test_every_document_at_or_above_the_kth_comes_back_ties_too() -> None:
    slots, counts = array("H", [0, 1, 2, 3]), array("B", [1, 1, 1, 3])
    lengths = array("I", [5, 5, 5, 5])
    found = top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 2)
    assert sorted(slot for _, slot in found) == [0, 1, 2, 3]  # 3 is best, 0-2 tie at the 2nd
    assert sorted(slot for _, slot in top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 1)) == [3]
    assert top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 0) == []
    removed = array("I", [5, 0, 5, 5])  # a length of 0 is a removed document
    assert 1 not in {slot for _, slot in top([(slots, counts, 2.0)], removed, 0.3, 0.18, 9)}


def test_a_tie_at_the_kth_comes_back_cut_to_the_newest_that_can_place() -> None:
    """With the documents' times, a tie at the k-th score comes back as those at least as
    new as the newest that fill the places left (an equal time kept with them); every
    higher score comes back whatever its time. Without them, every tied one does (the
    control above)."""
    slots = array("H", range(8))
    counts, lengths = array("B", [1, 1, 1, 1, 1, 1, 1, 3]), array("I", [5] * 8)
    created = (b"", array("q", [10, 70, 30, 70, 50, 20, 60, 1]))  # slot 7 scores highest
    found = top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 3, None, None, created)
    assert sorted(slot for _, slot in found) == [1, 3, 7]  # 7, then the two newest (70, 70)
    found = top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 4, None, None, created)
    assert sorted(slot for _, slot in found) == [1, 3, 6, 7]
    every = top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 3)
    assert len(every) == 8  # without the times: every tied document
    asked: list[int] = []

    def times() -> tuple[bytes, array[int]]:
        asked.append(1)
        return created

    assert len(top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 8, None, None, times)) == 8
    assert not asked  # every tied document places: the times are not read
    found = top([(slots, counts, 2.0)], lengths, 0.3, 0.18, 3, None, None, times)
    assert (sorted(slot for _, slot in found), asked) == ([1, 3, 7], [1])


@pytest.mark.parametrize("compiled", [True, False])
def test_a_text_repeated_thousands_of_times_ranks_newest_first(compiled: bool) -> None:
    """3,000 documents alike (a tool's answer every turn) tie at every place: the newest
    five win, ordered by time, and both rankings agree; a document scoring higher wins
    whatever its age (the control that scores, not times alone, rank)."""
    index = RecallIndex(compiled=compiled)
    for i in range(3_000):
        index.put((1, i), 1, 1_000 + (i // 2), ["done", "ok"])  # pairs share a time
    index.put((1, 9_999), 1, 1, ["done", "done", "ok"])
    hits = index.search(["done"], 5)
    assert hits[0].key == (1, 9_999)
    newest = [hit.key for hit in hits[1:]]
    assert newest == [(1, 2_998), (1, 2_999), (1, 2_996), (1, 2_997)]
    other = RecallIndex(compiled=not compiled)
    for i in range(3_000):
        other.put((1, i), 1, 1_000 + (i // 2), ["done", "ok"])
    other.put((1, 9_999), 1, 1, ["done", "done", "ok"])
    assert other.search(["done"], 5) == hits


@pytest.mark.parametrize(
    ("lists", "lengths", "error", "fragment"),
    [
        ([(array("H", [0]), array("B", [1]), 1.0)], array("d", [1.0]), TypeError, "lengths"),
        ([(array("h", [0]), array("B", [1]), 1.0)], array("I", [1]), TypeError, "slots"),
        ([(array("H", [0]), [1], 1.0)], array("I", [1]), TypeError, "bytes-like"),
        ([(array("H", [0, 1]), array("B", [1]), 1.0)], array("I", [1, 1]), ValueError, "differ"),
        ([(array("H", [7]), array("B", [1]), 1.0)], array("I", [1]), IndexError, "past"),
        ([(array("H", [0]), array("B", [1]))], array("I", [1]), TypeError, "3 arguments"),
    ],
    ids=["float lengths", "signed slots", "a list", "uneven", "past the end", "no weight"],
)
def test_columns_it_cannot_read_are_refused(
    lists: list[tuple[object, ...]], lengths: object, error: type[Exception], fragment: str
) -> None:
    with pytest.raises(error, match=fragment):
        top(lists, lengths, 0.3, 0.18, 5)
    # control: the same call with readable columns answers
    assert top([(array("H", [0]), array("B", [1]), 1.0)], array("I", [1]), 0.3, 0.18, 5)


def test_kept_copies_the_marked_items_of_any_width() -> None:
    created = array("q", [5, -7, 9, -11])
    assert array("q", kept(created, bytes([1, 0, 0, 1]))) == array("q", [5, -11])
    assert kept(created, bytes(4)) == b""  # control above: the same call keeps what is marked
    with pytest.raises(ValueError, match="one byte for each item"):
        kept(created, bytes(3))
    with pytest.raises(TypeError, match="bytes-like"):
        kept([5, 7], bytes(2))


def test_postings_kept_drops_the_removed_and_renumbers_the_rest() -> None:
    slots, counts = array("I", [0, 1, 2, 3]), array("B", [4, 9, 2, 1])
    lengths = array("I", [6, 0, 3, 8])  # slot 1 was removed
    renumber = array("I", [0, 1, 1, 2])  # the live slots close up
    new_slots, new_counts, most, least = postings_kept(slots, counts, lengths, renumber, 2)
    assert array("H", new_slots) == array("H", [0, 1, 2])
    assert array("B", new_counts) == array("B", [4, 2, 1])
    assert (most, least) == (4, 3)  # the removed document's count 9 is gone from the bound
    gone = postings_kept(slots, counts, array("I", [0, 0, 0, 0]), renumber, 4)
    assert gone == (b"", b"", 0, -1)
    with pytest.raises(IndexError, match="past"):
        postings_kept(array("I", [9]), array("B", [1]), lengths, renumber, 4)
    with pytest.raises(ValueError, match="width"):
        postings_kept(slots, counts, lengths, renumber, 3)


def test_any_item_sizes_sum_as_the_index_layout_does() -> None:
    # The index's own layout (two- or four-byte slots, one-byte counts, four-byte lengths)
    # has loops of its own; any other is read item by item, to the same sums.
    slots, counts, lengths = [0, 2, 3, 5], [1, 4, 2, 9], [7, 3, 0, 12, 5, 20]
    laid_out = [("H", "B", "I"), ("I", "B", "I"), ("Q", "B", "I"), ("H", "H", "Q"), ("B", "I", "L")]
    answers = []
    for slot_code, count_code, length_code in laid_out:
        lists = [(array(slot_code, slots), array(count_code, counts), 2.5)]
        found = top(lists, array(length_code, lengths), 0.3, 0.07, 9)
        answers.append(sorted(found))
    assert answers[0]  # control: the removed slot (2, length 0) aside, the documents are found
    assert {slot for _, slot in answers[0]} == {0, 3, 5}
    assert all(answer == answers[0] for answer in answers)
    with pytest.raises(IndexError, match="past"):  # the item-by-item loop checks too
        top([(array("Q", [9]), array("B", [1]), 1.0)], array("I", [1]), 0.3, 0.18, 5)


def test_a_filter_is_read_from_the_documents_own_columns_or_refused() -> None:
    slots, counts, lengths = array("H", [0, 1, 2]), array("B", [1, 1, 1]), array("I", [4, 4, 4])
    scenes, created = array("Q", [7, 8, 7]), array("q", [10, 20, 30])
    lists = [(slots, counts, 1.0)]

    def kept_slots(scene: int, start: int, end: int, base: bytes = b"") -> set[int]:
        where = (base, scenes, scene, base, created, start, end)
        return {slot for _, slot in top(lists, lengths, 0.3, 0.18, 9, where)}

    assert kept_slots(0, 0, 0) == {0, 1, 2}  # control: an open filter keeps every document
    assert kept_slots(7, 0, 0) == {0, 2}
    assert kept_slots(0, 15, 25) == {1}
    assert kept_slots(7, 0, 20) == {0}
    with pytest.raises(TypeError, match="8-byte"):
        top(lists, lengths, 0.3, 0.18, 9, (b"", array("I", [7, 8, 7]), 7, b"", created, 0, 0))
    with pytest.raises(TypeError):
        top(lists, lengths, 0.3, 0.18, 9, ("not", "a", "filter"))


def _skewed(docs: list[tuple[int, int]], *, compiled: bool) -> RecallIndex:
    """Documents of a common word or two, some with a rare one: the shape that lets the
    kernel stop reading the common words' lists."""
    index = RecallIndex(compiled=compiled)
    for i, (rare, length) in enumerate(docs):
        words = ["common"] * (1 + length % 3) + ["usual"] * (length % 5) + ["pad"] * length
        index.put((0, i), 1, i, [*words, f"rare{rare}"] if rare else words)
    return index


SKEWED_DOCS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12)), min_size=1, max_size=400)
SKEWED_QUERY = st.lists(
    st.sampled_from(["common", "usual", "pad", "rare1", "rare2", "rare3"]), min_size=1, max_size=4
)


@settings(max_examples=120, deadline=None)
@given(docs=SKEWED_DOCS, query=SKEWED_QUERY, limit=st.integers(1, 6))
def test_a_pruned_search_answers_as_maxscore_in_python(
    docs: list[tuple[int, int]], query: list[str], limit: int
) -> None:
    kernel, python = _skewed(docs, compiled=True), _skewed(docs, compiled=False)
    assert kernel.search(query, limit) == python.search(query, limit)  # keys and scores


def test_a_list_the_top_no_longer_needs_is_probed_not_read() -> None:
    rare_docs, lengths = array("H", [0, 1]), array("I", [3] * 30)
    rare = (rare_docs, array("B", [2, 1]), 5.0, 5.0 * 2 / (2 + 0.3 + 0.18 * 3))
    # The common list's last posting names a slot past the lengths: a search that reads
    # every posting refuses it; one that stops reading once the top is settled does not.
    common_docs = array("H", [*range(29), 99])  # ascending, as the index keeps them
    common = (common_docs, array("B", [1] * 30), 0.01, 0.01 * 1 / (1 + 0.3 + 0.18 * 3))
    with pytest.raises(IndexError, match="past the lengths"):
        top([rare[:3], common[:3]], lengths, 0.3, 0.18, 1)  # control: every posting read
    found = top([rare, common], lengths, 0.3, 0.18, 1)
    assert [slot for _, slot in found] == [0]
    first = 5.0 * 2 / (2 + 0.3 + 0.18 * 3) + 0.01 * 1 / (1 + 0.3 + 0.18 * 3)
    assert found[0][0] == first  # the common word's share added, as every posting would


@settings(max_examples=100, deadline=None)
@given(docs=SKEWED_DOCS, query=SKEWED_QUERY, limit=st.integers(1, 6))
def test_scores_summed_in_scratch_are_the_same_and_leave_it_zeroed(
    docs: list[tuple[int, int]], query: list[str], limit: int
) -> None:
    index = _skewed(docs, compiled=True)
    index.search(query, limit)  # makes the index's scratch: 8 bytes a slot
    ranked = [t for t in dict.fromkeys(query) if t in index._vocab]
    weights = {t: 1.0 + 3.0 / len(t) for t in ranked}  # any weights, summed heaviest first
    lists = [
        (*index._postings(index._vocab[t]), w, index._bound(index._vocab[t], w, 0.3, 0.18))
        for t, w in sorted(weights.items(), key=lambda tw: -tw[1])
    ]
    lengths, scratch = index._lengths, bytearray(8 * len(index._lengths))
    alone = top(lists, lengths, 0.3, 0.18, limit)
    assert sorted(top(lists, lengths, 0.3, 0.18, limit, None, scratch)) == sorted(alone)
    assert not any(scratch)  # zeroed again, the pruned documents' scores too
    narrowed = (
        b"",
        array("Q", [1 + i % 3 for i in range(len(lengths))]),
        2,
        b"",
        array("q", range(len(lengths))),
        0,
        0,
    )
    in_two = top(lists, lengths, 0.3, 0.18, limit, narrowed)
    assert sorted(top(lists, lengths, 0.3, 0.18, limit, narrowed, scratch)) == sorted(in_two)
    assert not any(scratch)  # the filtered-out documents' scores too


def test_a_refused_search_leaves_the_scratch_zeroed_and_a_short_one_unused() -> None:
    lengths, scratch = array("I", [3] * 4), bytearray(8 * 4)
    past = [(array("H", [0, 1, 9]), array("B", [1, 1, 1]), 1.0)]  # a slot past the lengths
    with pytest.raises(IndexError, match="past the lengths"):
        top(past, lengths, 0.3, 0.18, 2, None, scratch)
    assert not any(scratch)  # what it summed before the refusal was zeroed
    fine = [(array("H", [0, 1]), array("B", [2, 1]), 1.0)]
    short = bytearray(8)  # holds one slot of four: a fresh array is used instead
    assert top(fine, lengths, 0.3, 0.18, 1, None, short) == top(fine, lengths, 0.3, 0.18, 1)
    assert not any(short)
    assert [slot for _, slot in top(fine, lengths, 0.3, 0.18, 1, None, scratch)] == [0]


def _at_odd_address(column: array[int]) -> memoryview:
    """The column's items in a buffer that starts one byte past an aligned one, as a
    recall file's packed columns lie in its mapping."""
    raw = bytearray(1 + len(column) * column.itemsize)
    raw[1:] = column.tobytes()
    return memoryview(raw)[1:].cast(column.typecode)


def test_columns_at_odd_addresses_rank_as_aligned_ones() -> None:
    """Slots of each width, lengths and the filter's creation times read from buffers at
    odd addresses (each item copied out, never loaded through a misaligned pointer): the
    same hits as from arrays; the aligned call is the control."""
    lengths = array("I", [3, 5, 2, 7, 4, 6])
    created = array("q", [10, 20, 30, 40, 50, 60])
    scenes = array("Q", [1, 1, 2, 2, 1, 2])
    for code in ("H", "I", "Q"):
        slots, counts = array(code, [0, 2, 3, 5]), array("B", [1, 3, 2, 1])
        where = (b"", scenes, 0, b"", created, 15, 55)
        aligned = top([(slots, counts, 1.5)], lengths, 0.3, 0.18, 3, where)
        assert aligned  # the control: the query finds documents
        odd = (_at_odd_address(slots), _at_odd_address(counts), 1.5)
        packed_where = (b"", _at_odd_address(scenes), 0, b"", _at_odd_address(created), 15, 55)
        assert top([odd], _at_odd_address(lengths), 0.3, 0.18, 3, packed_where) == aligned
