"""RecallIndex: BM25 scores from the formula, exact MaxScore top-k, updates, repack, terms.

The reference scorer here is written from the formula in the module docstring
(Okapi BM25, k1 = 1.2, b = 0.75, idf ln(1 + (N - df + 0.5) / (df + 0.5))) and
scores every live document, so a pruning shortcut in ``search`` that drops a
document which belongs in the top k shows up as a difference.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.index import recall_terms as recall_index
from memhop.index.recall import K1, B, DocFilter, DocKey, RecallIndex
from memhop.index.recall_terms import terms_of
from memhop.text import content_words, tokens

Corpus = dict[DocKey, tuple[int, int, list[str]]]  # key -> (scene, created_at, terms)


RANKINGS = pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "python"])
"""Ranking tests run twice: through the compiled kernel (where it was built) and by MaxScore."""


def build(corpus: Corpus, compiled: bool = True) -> RecallIndex:
    index = RecallIndex(compiled=compiled)
    for key, (scene, at, terms) in corpus.items():
        index.put(key, scene, at, terms)
    return index


def brute_scores(corpus: Corpus, query: list[str]) -> dict[DocKey, float]:
    """Every document's BM25 score for ``query`` (a repeated query term counts once)."""
    live = {key: terms for key, (_, _, terms) in corpus.items() if terms}
    n = len(live)
    if n == 0:
        return {}
    avg = sum(len(t) for t in live.values()) / n
    scores: dict[DocKey, float] = {}
    for term in set(query):
        df = sum(1 for terms in live.values() if term in terms)
        if df == 0:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for key, terms in live.items():
            tf = terms.count(term)
            if tf:
                norm = K1 * (1 - B + B * len(terms) / avg)
                scores[key] = scores.get(key, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
    return scores


@RANKINGS
def test_bm25_order_and_scores_on_a_hand_computed_corpus(compiled: bool) -> None:
    corpus: Corpus = {
        (0, 1): (1, 10, ["ferry", "oslo", "noon"]),
        (0, 2): (1, 20, ["ferry", "ferry", "delay", "storm", "pier", "noon"]),
        (0, 3): (2, 30, ["kitten", "pixel"]),
    }
    index = build(corpus, compiled)
    # N = 3, average length (3 + 6 + 2) / 3 = 11 / 3
    avg = 11 / 3
    idf_ferry = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))  # df 2
    idf_storm = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # df 1

    def part(idf: float, tf: int, length: int) -> float:
        return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))

    doc1 = part(idf_ferry, 1, 3)
    doc2 = part(idf_ferry, 2, 6) + part(idf_storm, 1, 6)
    hits = index.search(["ferry", "storm"], 5)
    assert [h.key for h in hits] == [(0, 2), (0, 1)]
    assert [h.score for h in hits] == pytest.approx([doc2, doc1])
    # "ferry" alone: twice in a longer document (0.548) beats once in a short one (0.508)
    two = part(idf_ferry, 2, 6)
    hits = index.search(["ferry"], 5)
    assert [h.key for h in hits] == [(0, 2), (0, 1)]
    assert [h.score for h in hits] == pytest.approx([two, doc1])
    assert two > doc1 + 0.03  # the hand computation orders them clearly
    # a repeated query term counts once; an unknown term adds nothing
    assert index.search(["ferry", "ferry", "zeppelin"], 5) == index.search(["ferry"], 5)
    # control: the third document is found by its own words only
    assert [h.key for h in index.search(["pixel"], 5)] == [(0, 3)]
    assert index.search(["zeppelin"], 5) == []
    assert index.search([], 5) == []


@RANKINGS
def test_ties_go_to_the_newer_document_then_the_key(compiled: bool) -> None:
    index = build(
        {(1, 5): (1, 100, ["tea"]), (1, 6): (1, 200, ["tea"]), (0, 9): (1, 200, ["tea"])}, compiled
    )
    assert [h.key for h in index.search(["tea"], 3)] == [(0, 9), (1, 6), (1, 5)]
    assert [h.key for h in index.search(["tea"], 1)] == [(0, 9)]


WORDS = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"])
DOCS = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 4), st.lists(WORDS, max_size=12)),
    max_size=25,
)


@RANKINGS
@settings(max_examples=60, deadline=None)
@given(
    docs=DOCS,
    query=st.lists(WORDS, min_size=1, max_size=5),
    limit=st.integers(1, 6),
    scene=st.sampled_from([0, 1, 2]),
    removed=st.sets(st.integers(0, 24), max_size=8),
    span=st.tuples(st.integers(0, 4), st.integers(0, 4)),
)
def test_top_k_equals_brute_force(
    docs: list[tuple[int, int, list[str]]],
    query: list[str],
    limit: int,
    scene: int,
    removed: set[int],
    span: tuple[int, int],
    compiled: bool,
) -> None:
    corpus: Corpus = {(i % 2, i): doc for i, doc in enumerate(docs)}
    index = build(corpus, compiled)
    for i in removed:  # dead slots stay in the postings until a repack
        index.remove((i % 2, i))
        corpus.pop((i % 2, i), None)
    brute = brute_scores(corpus, query)
    start, end = span  # 0: open at that end
    for where in (None, DocFilter(scene_id=scene), DocFilter(scene_id=scene, start=start, end=end)):

        def passes(key: DocKey, where: DocFilter | None = where) -> bool:
            at = corpus[key][1]
            return where is None or (
                (not where.scene_id or corpus[key][0] == where.scene_id)
                and (not where.start or at >= where.start)
                and (not where.end or at <= where.end)
            )

        kept = {k: s for k, s in brute.items() if passes(k)}
        hits = index.search(query, limit, where)
        best = sorted(kept.values(), reverse=True)[:limit]
        assert [h.score for h in hits] == pytest.approx(best)
        if not best:
            assert hits == []
            continue
        # the hits are exactly the documents scoring above the k-th, plus some tied at it
        floor = best[-1]
        above = {k for k, s in kept.items() if s > floor + 1e-9}
        tied = {k for k, s in kept.items() if abs(s - floor) <= 1e-9}
        got = {h.key for h in hits}
        assert above <= got <= above | tied
        for hit in hits:
            assert hit.score == pytest.approx(kept[hit.key])


@RANKINGS
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), removed_every=st.sampled_from([0, 3, 7]))
def test_top_k_equals_brute_force_on_a_skewed_corpus_of_thousands(
    seed: int,
    removed_every: int,
    compiled: bool,
) -> None:
    # Big enough that a common term's postings span several checks (over 1,024 a scan),
    # with long documents repeating a word many times beside short ones: the bounds and
    # the floor probed from full scores have real work, and a pruning that drops a
    # document of the top k shows up against the reference scorer.
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(60)]
    weights = [1 / (i + 1) for i in range(60)]  # Zipf-like: w0 is in most documents
    corpus: Corpus = {}
    for i in range(2500):
        length = rng.choice([2, 3, 5, 8, 40, 120])
        corpus[(i % 2, i)] = (i % 4, i // 3, rng.choices(vocab, weights, k=length))
    index = build(corpus, compiled)
    if removed_every:
        for key in list(corpus)[::removed_every]:
            assert index.remove(key)
            del corpus[key]
    for _ in range(12):
        query = rng.sample(vocab[:30], rng.randint(1, 6))
        limit = rng.choice([1, 5, 10])
        brute = brute_scores(corpus, query)
        hits = index.search(query, limit)
        best = sorted(brute.values(), reverse=True)[:limit]
        assert best  # control: the query's words are in the corpus
        assert [h.score for h in hits] == pytest.approx(best)
        above = {k for k, v in brute.items() if v > best[-1] + 1e-9}
        assert above <= {h.key for h in hits}
        in_scene = index.search(query, limit, DocFilter(scene_id=1))
        kept = sorted((v for k, v in brute.items() if corpus[k][0] == 1), reverse=True)
        assert [h.score for h in in_scene] == pytest.approx(kept[:limit])


@RANKINGS
def test_a_common_term_still_adds_to_the_few_documents_already_ranked(compiled: bool) -> None:
    # "zeppelin" fills the top 2 at once; "common" (in 8x more documents) can no longer
    # bring in a new one, and is looked up in the two ranked documents only.
    corpus: Corpus = {(0, i): (1, i, ["common", f"filler{i}"]) for i in range(40)}
    corpus[(0, 100)] = (1, 100, ["zeppelin", "common"])
    corpus[(0, 101)] = (1, 101, ["zeppelin", "filler"])  # newer: wins a tie
    index = build(corpus, compiled)
    hits = index.search(["zeppelin", "common"], 2)
    assert [h.key for h in hits] == [(0, 100), (0, 101)]
    brute = brute_scores(corpus, ["zeppelin", "common"])
    assert [h.score for h in hits] == pytest.approx([brute[(0, 100)], brute[(0, 101)]])


def test_put_replaces_the_document_under_its_key() -> None:
    index = build({(0, 1): (1, 10, ["ferry", "noon"]), (0, 2): (1, 20, ["kitten"])})
    assert [h.key for h in index.search(["ferry"], 5)] == [(0, 1)]
    index.put((0, 1), 1, 10, ["kitten", "pixel"])
    assert index.search(["ferry"], 5) == []
    assert {h.key for h in index.search(["kitten"], 5)} == {(0, 1), (0, 2)}
    assert len(index) == 2
    assert index == build({(0, 1): (1, 10, ["kitten", "pixel"]), (0, 2): (1, 20, ["kitten"])})
    # no terms is a removal
    index.put((0, 1), 1, 10, [])
    assert (0, 1) not in index
    assert [h.key for h in index.search(["kitten"], 5)] == [(0, 2)]


@RANKINGS
def test_remove_forgets_and_the_statistics_follow(compiled: bool) -> None:
    corpus: Corpus = {
        (0, 1): (1, 10, ["ferry", "noon", "noon"]),
        (0, 2): (1, 20, ["ferry", "storm"]),
        (1, 3): (2, 30, ["storm", "pier", "rain", "wind"]),
    }
    index = build(corpus, compiled)
    assert index.remove((0, 2)) is True
    assert index.remove((0, 2)) is False  # already gone
    assert index.remove((5, 5)) is False  # never there
    del corpus[(0, 2)]
    assert index == build(corpus, compiled)
    for query in (["ferry"], ["storm"], ["noon", "storm"]):
        hits = index.search(query, 5)
        assert {h.key: h.score for h in hits} == pytest.approx(brute_scores(corpus, query))
    assert [h.key for h in index.search(["storm"], 5)] == [(1, 3)]  # control: still found
    assert index.keys() == [(0, 1), (1, 3)]


@RANKINGS
def test_repack_after_many_removals_keeps_results_equal(compiled: bool) -> None:
    index = RecallIndex(compiled=compiled)
    corpus: Corpus = {}
    for i in range(1500):
        terms = [f"w{i % 7}", f"w{i % 11}", f"w{i % 13}", f"w{i % 13}"]
        corpus[(0, i)] = (i % 3, i, terms)
        index.put((0, i), i % 3, i, terms)
    for i in range(1500):
        if i % 5:  # 1200 removals: past the 1024 dead slots and more dead than live
            index.remove((0, i))
            del corpus[(0, i)]
            assert index.repack_due == (i > 1280)  # control: due only past both bounds
    assert len(index) == len(corpus) == 300
    job = index.begin_repack()
    job.run()
    assert index.finish_repack(job)
    assert not index.repack_due
    assert not index.finish_repack(job)  # taken once
    assert index == build(corpus, compiled)
    fresh = build(corpus, compiled)
    for query in (["w0"], ["w3", "w5"], ["w1", "w2", "w12"], ["w6", "w10"]):
        hits = index.search(query, 10)
        assert hits == fresh.search(query, 10)
        assert hits  # control: the query matches live documents
        assert [h.score for h in hits] == pytest.approx(
            sorted(brute_scores(corpus, query).values(), reverse=True)[:10]
        )
    # the index keeps working after the repack
    index.put((0, 9999), 1, 5, ["w0", "fresh"])
    assert [h.key for h in index.search(["fresh"], 3)] == [(0, 9999)]


@RANKINGS
def test_accept_filters_before_ranking(compiled: bool) -> None:
    index = build({(0, i): (i % 2 + 1, 100 + i, ["tea"] * (i + 1)) for i in range(6)})
    every = index.search(["tea"], 2)
    assert {h.key for h in every} == {(0, 5), (0, 4)}  # control: unfiltered, the most tea wins
    odd = index.search(["tea"], 2, DocFilter(scene_id=1))
    assert [h.key for h in odd] == [(0, 4), (0, 2)]  # the limit counts accepted documents only
    late = index.search(["tea"], 6, DocFilter(end=102))
    assert {h.key for h in late} == {(0, 0), (0, 1), (0, 2)}
    assert index.search(["tea"], 6, DocFilter(scene_id=9)) == []  # no document of scene 9
    assert index.search(["tea"], 6, DocFilter(start=103)) != []  # control: a bound that keeps some


def test_equality_is_by_contents_not_by_history() -> None:
    a = build({(0, 1): (1, 10, ["ferry"]), (0, 2): (1, 20, ["kitten"])})
    b = RecallIndex()
    b.put((0, 2), 1, 20, ["kitten"])
    b.put((0, 3), 1, 30, ["zeppelin"])
    b.put((0, 1), 1, 10, ["ferry"])
    assert a != b  # control: an extra document differs
    b.remove((0, 3))
    assert a == b
    b.put((0, 1), 2, 10, ["ferry"])
    assert a != b  # the scene is part of a document


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("The cats were jumping", ["cat", "jump"]),
        ("parties jumped Ben's", ["party", "jump", "ben"]),
        ("class status analysis bus", ["class", "status", "analysis", "bus"]),
        ("Kittens kitten KITTEN", ["kitten", "kitten", "kitten"]),
        ("I may visit in May 2023", ["visit", "may", "2023"]),
        ("the and of to", []),
    ],
)
def test_terms_of_folds_case_and_inflections_and_drops_stop_words(
    text: str, terms: list[str]
) -> None:
    assert terms_of(text) == terms


def test_a_query_word_meets_its_inflections() -> None:
    for forms in (["cat", "cats", "Cat's"], ["party", "parties"], ["jump", "jumped", "jumping"]):
        assert len({tuple(terms_of(f)) for f in forms}) == 1, forms


def test_terms_of_cuts_cjk_at_function_characters() -> None:
    assert terms_of("我们重构了代码") == ["重构", "代码"]
    assert terms_of("重构代码") == ["重构代码"]  # a short run without breaks stays whole


_WORDY = st.lists(
    st.sampled_from([*"aeiouMaybcdsg'’- .,\n我们的代码", "ing", "ies", "May"]), max_size=40
).map("".join)


@given(texts=st.lists(_WORDY, min_size=1, max_size=12), memo_max=st.integers(1, 8))
def test_a_cutter_with_a_memo_gives_the_direct_cut_whatever_its_memo_holds(
    texts: list[str], memo_max: int
) -> None:
    """A ``Terms`` memo (small here, so it fills and empties) never changes a text's terms."""
    cutter = recall_index.Terms(memo_max)
    for text in texts * 2:  # the second time round, tokens come from the memo
        direct = [
            recall_index._stem(word.casefold()) for word, carries in content_words(text) if carries
        ]
        assert cutter.of(text) == terms_of(text) == direct
    assert len(cutter) <= memo_max
    assert bool(len(cutter)) == any(tokens(t) for t in texts)  # used when it could be


def test_two_cutters_share_no_memo() -> None:
    """Each domain's state has its own cutter: one's memo never holds another's words."""
    mine, theirs = recall_index.Terms(), recall_index.Terms()
    assert mine.of("herons nesting") == ["heron", "nest"]
    assert len(mine) == 2  # control: the memo is used
    assert len(theirs) == 0
