"""Every L1 edge's members, weight and decay clock, read for a cold Dream cache.

Responsibility: a cold cache (the first pass after an open) must know when
each edge's decay is next due without decoding every edge; this reads the
shape Go and memhop write (no whitespace, keys in field order) with one
anchored pattern (``scene_node.plain_edge_clock``). An edge in any other
shape is simply not answered: the caller looks at it as soon as it can,
through the full decode.

Contract: for each live edge answered, the same members, weight and clock
(``last_decay_at``, else ``created_at``) as ``SceneEdge.from_json`` of its
record; damaged frames are skipped and counted by the engine.
"""

from __future__ import annotations

from memhop.engine import Engine
from memhop.records import RecordType
from memhop.records.scene_node import EdgeClock, plain_edge_clock

__all__ = ["edge_clocks"]


def edge_clocks(engine: Engine, agent_id: int) -> dict[int, EdgeClock]:
    """id -> (members, weight, clock) of the domain's edges stored in the usual shape."""
    found: dict[int, EdgeClock] = {}
    for id_hash, payload in engine.payloads_of_type(agent_id, RecordType.SCENE_EDGE):
        clock = plain_edge_clock(payload)
        if clock is not None:
            found[id_hash] = clock
    return found
