"""Writes the tests set state up with that the product makes only inside larger batches."""

from __future__ import annotations

from collections.abc import Sequence

from memhop.engine import Engine
from memhop.layers import codec, topic
from memhop.records import TopicSlot


def write_turn_topic(
    engine: Engine,
    agent_id: int,
    scene_id: int,
    topic_id: int,
    keywords: Sequence[str],
    user_ts: int,
    agent_ts: int,
) -> TopicSlot:
    """Write ``topic.turn_topic`` alone, durably, and return it (``update`` writes it in
    one batch with the turn's lines)."""
    row = topic.turn_topic(engine, agent_id, scene_id, topic_id, keywords, user_ts, agent_ts)
    codec.write(engine, agent_id, topic_id, row)
    return row
