"""Every L1 edge's members, weight and decay clock, read for a cold Dream cache.

Responsibility: a cold cache (the first pass after an open) must know when
each edge's decay is next due without decoding every edge; this reads the
shape Go and memhop write (no whitespace, keys in field order) with one
anchored pattern. An edge in any other shape is simply not answered: the
caller looks at it as soon as it can, through the full decode.

Contract: for each live edge answered, the same members, weight and clock
(``last_decay_at``, else ``created_at``) as ``SceneEdge.from_json`` of its
record; damaged frames are skipped and counted by the engine.
"""

from __future__ import annotations

import math
import re

from memhop.engine import Engine
from memhop.records import RecordType
from memhop.records.shapes import INT, UINT_DIGITS

__all__ = ["EdgeClock", "edge_clocks"]

_SHAPE = re.compile(
    rb'\{"id_hash":' + UINT_DIGITS
    + rb',"node_ids":\[((?:' + UINT_DIGITS + rb"(?:," + UINT_DIGITS + rb")*)?)\]"
    + rb',"weight":(-?[0-9][0-9.eE+-]*),"created_at":' + INT + rb',"last_decay_at":' + INT
    + rb"\}"
)  # fmt: skip

EdgeClock = tuple[tuple[int, ...], float, int]
"""(members, weight, decay clock) of one edge."""


def edge_clocks(engine: Engine, agent_id: int) -> dict[int, EdgeClock]:
    """id -> (members, weight, clock) of the domain's edges stored in the usual shape."""
    found: dict[int, EdgeClock] = {}
    for id_hash, payload in engine.payloads_of_type(agent_id, RecordType.SCENE_EDGE):
        m = _SHAPE.fullmatch(payload)
        if m is None:
            continue
        members, weight_text, created, last = m.groups()
        try:
            weight = float(weight_text)
        except ValueError:
            continue
        if math.isfinite(weight):
            nodes = tuple(int(n) for n in members.split(b",")) if members else ()
            found[id_hash] = (nodes, weight, int(last) or int(created))
    return found
