"""Listings against the dict of tuples it stands for: the same answers after any run of
adds and removes (one node held flat, two or more in a tuple)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.index.listings import Listings

TOPICS = st.integers(1, 6)
NODES = st.sampled_from([7, 8, 9, 2**64 - 1])  # ids are 64-bit hashes, the top one too
STEPS = st.lists(st.tuples(st.booleans(), TOPICS, NODES), max_size=60)


@settings(max_examples=200, deadline=None)
@given(steps=STEPS)
def test_listings_answer_as_a_dict_of_tuples(steps: list[tuple[bool, int, int]]) -> None:
    listings = Listings()
    model: dict[int, tuple[int, ...]] = {}
    for adding, topic, node in steps:
        if adding:
            listings.add(topic, node)
            model[topic] = (*model.get(topic, ()), node)
        else:
            listings.remove(topic, node)
            kept = tuple(n for n in model.get(topic, ()) if n != node)
            if kept:
                model[topic] = kept
            else:
                model.pop(topic, None)
        for t in range(1, 7):
            assert listings.of(t) == model.get(t, ())
    assert len(listings) == len(model)


def test_a_topic_held_by_two_nodes_keeps_the_other_when_one_goes() -> None:
    listings = Listings()
    listings.add(1, 7)
    listings.add(1, 8)
    listings.add(2, 7)
    assert listings.of(1) == (7, 8)
    listings.remove(1, 7)
    assert listings.of(1) == (8,)
    assert listings.of(2) == (7,)  # control: another topic of the same node is untouched
    listings.remove(1, 8)
    assert listings.of(1) == ()
    assert len(listings) == 1
