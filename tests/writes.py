"""Writes the tests set state up with that the product makes only inside larger batches."""

from __future__ import annotations

from typing import Any

from memhop.engine import Engine
from memhop.layers import codec, topic
from memhop.records import TopicSlot


def write_turn_topic(engine: Engine, agent_id: int, *turn: Any) -> TopicSlot:
    """Write ``topic.turn_topic(engine, agent_id, *turn)`` (scene, topic id, keywords, user
    and agent stamps) alone, durably, and return it: ``update`` writes it in one batch with
    the turn's lines."""
    row = topic.turn_topic(engine, agent_id, *turn)
    codec.write(engine, agent_id, row.id, row)
    return row
