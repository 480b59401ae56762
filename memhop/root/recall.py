"""``recall``: rank a domain's memory for a free-text query (memhop's own; upstream has none).

What is ranked, and how the domain's recall state is built and kept current,
is ``memhop.root.recall_index``'s; this module answers a query from it: the
best rows and events, each rendered as the host reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memhop.domain.context import DomainContext
from memhop.domain.mirrors import Mirrors
from memhop.domain.warm import Part
from memhop.engine import Engine
from memhop.errors import CRCMismatchError, InvalidQueryError
from memhop.index.recall import DocFilter, DocKey
from memhop.records import ArchiveSlot
from memhop.root import recall_warm
from memhop.root.content import check_ms
from memhop.root.ops import AgentOps
from memhop.root.provenance import TURN, Provenance, of_row
from memhop.root.recall_docs import EVENT, Refresh
from memhop.root.recall_index import between_steps, build_step, current, ready

__all__ = [
    "MAX_RECALL_LIMIT",
    "RecallFound",
    "RecallQuery",
    "recall",
    "recall_in_steps",
]

MAX_RECALL_LIMIT = 100
_MATCHED_MEMBER_LINES = 3  # a Dream row's answer quotes at most this many folded lines
_QUOTE_RUN = 4  # folded rows whose lines are read at a time, until enough are quoted


@dataclass(frozen=True, slots=True)
class RecallQuery:
    text: str
    limit: int = 5
    scene_id: int = 0
    start: int = 0
    end: int = 0

    def validate(self) -> None:
        if not self.text.strip():
            msg = "query is empty: say what to recall"
            raise InvalidQueryError(msg)
        if not 1 <= self.limit <= MAX_RECALL_LIMIT:
            msg = f"limit {self.limit} is out of range: recall returns 1 to {MAX_RECALL_LIMIT} hits"
            raise InvalidQueryError(msg)
        for bound, what in ((self.start, "start"), (self.end, "end")):
            if bound:
                check_ms(bound, what)


@dataclass(frozen=True, slots=True)
class RecallFound:
    """One hit: a surface row (``topic`` set, ``event`` None) or an event."""

    score: float
    scene_id: int
    topic_id: int
    created_at: int
    keywords: tuple[str, ...]
    text: str
    provenance: Provenance = TURN
    event: ArchiveSlot | None = None


def recall_in_steps(ops: AgentOps, query: RecallQuery) -> list[RecallFound]:
    """``recall`` through ``ops``. A warm domain whose saved state serves answers from its
    views at once; else the domain's index is built first in steps (``build_step``),
    each in a hold of its own, so the domain's turns go on while it is built.

    A saved state whose bytes, read now, do not check is let go, and the domain is
    indexed from its records instead (the recall file forgets it at the next close)."""
    query.validate()
    try:
        return _in_steps(ops, query)
    except CRCMismatchError:
        ops.run(_let_go)
        return _in_steps(ops, query)


def _let_go(engine: Engine, ctx: DomainContext) -> None:
    """Drop a state found damaged: the domain's recall waits for a build from the records."""
    ctx.drop_recall()
    if ctx.warm is not None:
        ctx.warm.recall_refused = True


def _in_steps(ops: AgentOps, query: RecallQuery) -> list[RecallFound]:
    ops.prepare_recall()  # the saved state's decode holds no lock: turns go on meanwhile
    found = ops.on_scene(_recall_now, query)
    if found is not None:
        return found
    while not ops.run(build_step):
        between_steps()
    return ops.run(recall, query)


def _recall_now(engine: Engine, ctx: DomainContext, query: RecallQuery) -> list[RecallFound] | None:
    """``recall`` in this hold when nothing is left to build: from a warm domain's views,
    or from the built index (one hold a recall, as a turn's other calls); None when the
    index must be built first."""
    refresh = recall_warm.current(engine, ctx)
    if refresh is None and ready(ctx):
        refresh = current(engine, ctx)
    return None if refresh is None else _answer(refresh, query)


def recall(engine: Engine, ctx: DomainContext, query: RecallQuery) -> list[RecallFound]:
    """The best ``query.limit`` rows and events for ``query.text``, best first."""
    query.validate()
    return _answer(current(engine, ctx), query)


def _answer(refresh: Refresh, query: RecallQuery) -> list[RecallFound]:
    wanted = refresh.state.terms.of(query.text)
    filtered = query.scene_id or query.start or query.end
    where = DocFilter(query.scene_id, query.start, query.end) if filtered else None
    hits = refresh.state.index.search(wanted, query.limit, where)
    return [_found(refresh, hit.key, hit.score, set(wanted)) for hit in hits]


def _quoted(
    refresh: Refresh, reading: Mirrors, members: Sequence[int], wanted: set[str]
) -> list[str]:
    """The first ``_MATCHED_MEMBER_LINES`` lines of ``members`` (in order) holding a word of
    the query, read a few members at a time: a Dream row folds a scene's turns, and its
    lines after the last one quoted need not be read."""
    quoted: list[str] = []
    cut = refresh.state.terms.of
    for at in range(0, len(members), _QUOTE_RUN):
        for line in refresh.lines(reading, members[at : at + _QUOTE_RUN]):
            if not wanted.isdisjoint(cut(line.content)):
                quoted.append(line.content)
                if len(quoted) == _MATCHED_MEMBER_LINES:
                    return quoted
    return quoted


def _found(refresh: Refresh, key: DocKey, score: float, wanted: set[str]) -> RecallFound:
    kind, doc_id = key
    ctx = refresh.ctx
    if kind == EVENT:
        event = ctx.slots.read(refresh.engine, ctx.agent_id, [doc_id])[0]
        return RecallFound(
            score=score,
            scene_id=refresh.state.index.scene_of(key) or 0,
            topic_id=event.topic_id,
            created_at=event.created_at,
            keywords=(),
            text=event.content,
            event=event,
        )
    scene_id = refresh.topic_scene(doc_id)
    assert scene_id is not None  # the index was brought up to date under this lock
    # The row and what it folded, as last indexed (brought up to date under this lock):
    # a warm domain reads those records alone, not the scene's.
    members = refresh.state.members.get(doc_id, ())  # in the order derived_from lists them
    family = frozenset((doc_id, *members))
    reading = refresh.reading(scene_id, Part(family, family))
    row = reading.topics.get(doc_id)
    assert row is not None
    kids = reading.topics.children_of(scene_id, row.id)
    provenance = of_row(reading.contents, row, kids)
    own = [s.content for s in refresh.lines(reading, [row.id])]
    if provenance.origin != TURN.origin:
        own += _quoted(refresh, reading, members, wanted)
    return RecallFound(
        score=score,
        scene_id=scene_id,
        topic_id=row.id,
        created_at=row.user_timestamp,
        keywords=row.fused_keywords,
        text="\n".join(own),
        provenance=provenance,
    )
