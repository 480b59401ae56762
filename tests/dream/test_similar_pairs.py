"""``decay.similar_pairs`` is ``jaccard`` over every pair, filtered and in pair order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memhop.dream import decay

WORDS = st.sampled_from(["ann", "bob", "cat", "dog", "eel", "fig", "gnu", "hat", "ink", "jar"])
SETS = st.dictionaries(st.integers(0, 2**64 - 1), st.frozensets(WORDS, max_size=7), max_size=12)
FLOORS = st.one_of(st.just(0.15), st.floats(min_value=1e-6, max_value=1.0))


def _every_pair(sets: dict[int, frozenset[str]], floor: float) -> list[tuple[int, int, float]]:
    keys = sorted(sets)
    weighed = [
        (low, high, decay.jaccard(sets[low], sets[high]))
        for i, low in enumerate(keys)
        for high in keys[i + 1 :]
    ]
    return [p for p in weighed if p[2] >= floor]


@given(SETS, FLOORS)
def test_the_pairs_and_values_of_jaccard_over_every_pair(
    sets: dict[int, frozenset[str]], floor: float
) -> None:
    assert list(decay.similar_pairs(sets, floor)) == _every_pair(sets, floor)


def test_a_pair_on_the_floor_is_kept_and_one_below_it_is_not() -> None:
    sets = {
        1: frozenset({"a", "b"}),
        2: frozenset({"b", "c"}),  # with 1: 1/3
        3: frozenset({"a"}),  # with 1: 1/2
        4: frozenset({"a", *(f"x{i}" for i in range(6))}),  # with 1: 1/8; with 3: 1/7
        5: frozenset(),  # never paired
    }
    found = list(decay.similar_pairs(sets, 0.15))
    assert found == [(1, 2, 1 / 3), (1, 3, 1 / 2)]
    # The same sets at 1/7: the pair on that floor is kept, 1/8 below it is not.
    assert list(decay.similar_pairs(sets, 1 / 7)) == [*found, (3, 4, 1 / 7)]
