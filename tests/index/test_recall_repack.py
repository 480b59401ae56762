"""A recall index repacked in three parts while it is edited between them.

``begin_repack`` (under the lock), ``run`` (no lock: the index is edited
meanwhile, by another thread in the root), ``finish_repack`` (under the lock,
redoing what changed since it began). Whatever the edits before, during and
after, the index ends equal to one built from scratch over the same documents,
and ranks as it does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.index import kernel
from memhop.index.recall import DocKey, RecallIndex
from memhop.index.recall_packed import Postings

Corpus = dict[DocKey, tuple[int, int, list[str]]]

MODES = pytest.mark.parametrize(
    "compiled",
    [pytest.param(True, marks=pytest.mark.skipif(not kernel.COMPILED, reason="no kernel")), False],
    ids=["kernel", "python"],
)
WORDS = st.sampled_from(["tea", "ferry", "storm", "kite", "moss", "lamp", "fig", "owl"])
# (op, key, words): op 0 puts the key (replacing it), op 1 removes it
EDITS = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 40), st.lists(WORDS, max_size=6)), max_size=40
)


def build(corpus: Corpus, compiled: bool) -> RecallIndex:
    index = RecallIndex(compiled=compiled)
    for key, (scene, at, terms) in corpus.items():
        index.put(key, scene, at, terms)
    return index


def edit(index: RecallIndex, corpus: Corpus, op: int, n: int, words: list[str]) -> None:
    key = (n % 2, n)
    if op == 0 and words:
        terms = [*words, f"only{n}"]  # a term first met here: new terms mid-repack too
        index.put(key, n % 3, n, terms)
        corpus[key] = (n % 3, n, terms)
    else:
        index.remove(key)
        corpus.pop(key, None)


def assert_same(index: RecallIndex, corpus: Corpus, compiled: bool) -> None:
    fresh = build(corpus, compiled)
    assert index == fresh
    assert len(index) == len(corpus)
    for query in (["tea"], ["ferry", "storm"], ["kite", "moss", "owl"], ["fig", "lamp", "tea"]):
        # every match (no cut among ties); a score may differ in its last bit, as the terms'
        # bounds (which order the sums) stay loose after a removal and are exact when built
        got = {h.key: h.score for h in index.search(query, 100)}
        assert got == pytest.approx({h.key: h.score for h in fresh.search(query, 100)})


def interleaved(read: Callable[[int], tuple[Postings, Postings]], step: Callable[[], None]):
    """The run's postings reader, with an edit of the index before every read."""

    def reading(term_id: int) -> tuple[Postings, Postings]:
        step()
        return read(term_id)

    return reading


@MODES
@settings(max_examples=80, deadline=None)
@given(before=EDITS, during=EDITS, after=EDITS)
def test_edits_before_during_and_after_a_run_leave_what_a_fresh_build_makes(
    before: list[tuple[int, int, list[str]]],
    during: list[tuple[int, int, list[str]]],
    after: list[tuple[int, int, list[str]]],
    compiled: bool,
) -> None:
    index, corpus = RecallIndex(compiled=compiled), Corpus()
    for n in range(30):  # documents to remove and replace
        edit(index, corpus, 0, n, ["tea", "owl"][: n % 3])
    for op, n, words in before:
        edit(index, corpus, op, n, words)
    job = index.begin_repack()
    pending = list(during)

    def step() -> None:
        if pending:
            edit(index, corpus, *pending.pop(0))

    job._postings = interleaved(job._postings, step)  # edits land between the run's reads
    job.run()
    for op, n, words in pending:  # more terms were read than there were edits, or fewer
        edit(index, corpus, op, n, words)
    for op, n, words in after:
        edit(index, corpus, op, n, words)
    assert index.finish_repack(job)
    assert_same(index, corpus, compiled)
    index.put((0, 999), 1, 999, ["tea", "newest"])  # and it goes on taking edits
    corpus[(0, 999)] = (1, 999, ["tea", "newest"])
    assert_same(index, corpus, compiled)


@MODES
def test_a_repack_drops_the_removed_and_ranks_as_before(compiled: bool) -> None:
    index, corpus = RecallIndex(compiled=compiled), Corpus()
    for n in range(3000):
        edit(index, corpus, 0, n, ["tea", "ferry", "storm", "kite", "moss"][: 1 + n % 5])
    for n in range(3000):
        if n % 4:
            edit(index, corpus, 1, n, [])
    assert index.repack_due
    before = {q: index.search([q], 10) for q in ("tea", "kite")}
    assert all(before.values())  # control: the queries match live documents
    job = index.begin_repack()
    paced: list[int] = []
    job.run(lambda: paced.append(len(paced)))
    assert len(paced) >= 2  # the root's pace had its say between chunks of the work
    assert index.finish_repack(job)
    assert not index.repack_due
    assert {q: index.search([q], 10) for q in before} == before
    assert_same(index, corpus, compiled)


def test_only_the_repack_begun_last_is_taken_and_one_not_run_is_refused() -> None:
    index, corpus = RecallIndex(), Corpus()
    for n in range(40):
        edit(index, corpus, 0, n, ["tea", "moss"])
    for n in range(0, 40, 2):
        edit(index, corpus, 1, n, [])
    first = index.begin_repack()
    assert not index.finish_repack(first)  # not run: the index stays as it is
    assert_same(index, corpus, compiled=True)
    first.run()
    second = index.begin_repack()
    second.run()
    assert not index.finish_repack(first)  # a later one began: this one is stale
    assert_same(index, corpus, compiled=True)
    assert index.finish_repack(second)  # control: the last one is taken
    assert_same(index, corpus, compiled=True)


def test_a_run_on_another_thread_beside_edits_on_this_one() -> None:
    index, corpus = RecallIndex(), Corpus()
    for n in range(4000):
        edit(index, corpus, 0, n, ["tea", "ferry", "storm", "kite", "lamp"][: 1 + n % 5])
    for n in range(0, 4000, 3):
        edit(index, corpus, 1, n, [])
    job = index.begin_repack()
    runner = threading.Thread(target=job.run)
    runner.start()
    n = 0
    while runner.is_alive() or n < 200:  # the edits a host makes while the run goes on
        edit(index, corpus, n % 3 == 0, 4000 + n % 500, ["owl", "tea"][: 1 + n % 2])
        n += 1
    runner.join()
    assert index.finish_repack(job)
    assert_same(index, corpus, compiled=kernel.COMPILED)
