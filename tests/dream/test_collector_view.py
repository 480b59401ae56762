"""State a domain keeps for as long as it is open stays out of the interpreter's collector.

Every full collection walks each tracked container with all it holds; a dict holding
only ints and None is never tracked, a set always is. These tests keep the id sets that
grow with a domain's age (Dream's keyword holders, the content mirror's summarised
topics) from turning back into sets.
"""

from __future__ import annotations

import gc

from memhop.dream.node_words import NodeWords
from memhop.ids import content_id
from memhop.index.l4 import L4Index
from memhop.records import ArchiveRole, ArchiveSlot


def test_the_keyword_holders_are_not_walked_by_the_collector() -> None:
    words = NodeWords()
    for node_id in range(1, 200):
        words.put(node_id, frozenset({"harbour", f"word{node_id % 7}", f"rare{node_id}"}))
    words.put(5, frozenset({"harbour"}))  # a node's words rewritten: some holders shrink
    gc.collect()
    assert set(words.holders["harbour"]) == set(range(1, 200))  # they hold the nodes
    # No word's nodes are walked (the dict of words is: one visit a word, not a node).
    assert not any(gc.is_tracked(nodes) for nodes in words.holders.values())
    # The control: the nodes' keyword sets are frozensets, which the collector does walk.
    assert gc.is_tracked(words.sets[1])


def test_the_summarised_topics_are_not_walked_by_the_collector() -> None:
    mirror = L4Index()
    for topic_id in range(1, 50):
        mirror.put(
            ArchiveSlot(
                id_hash=content_id(topic_id, 1),
                seq=1,
                role=ArchiveRole.DREAM,
                topic_id=topic_id,
                content="a summary",
            )
        )
        mirror.put(
            ArchiveSlot(id_hash=content_id(topic_id, 2), seq=2, topic_id=topic_id, content="a line")
        )
    gc.collect()
    summarised = mirror.summarised_topics()
    assert summarised is not None
    assert set(summarised) == set(range(1, 50))  # the summaries are noted, the lines not
    assert not gc.is_tracked(mirror._dreamed)
    assert gc.is_tracked(set(summarised))  # the control: the same ids as a set are walked
