"""What a recall document holds, and redoing the documents of the topics that changed.

A document is every surface row (a turn's keyword track and stored lines; a
Dream row's summary, its track, and the tracks and surviving lines of the
turns it folded) and every event. A row is read in context: its document also
holds the lines of the surface rows beside it in its scene (``NEIGHBOURS`` on
each side), at half the weight of its own words, because in a conversation the
words that name a thing are often in the turn before or after the one that
answers (measured on LoCoMo's labelled conversations: evidence retention in
the top 5 from 53% to 59%). ``Refresh`` is one pass over a state
(``memhop.root.recall_index`` decides when one runs).
"""

from __future__ import annotations

from collections.abc import Iterable

from memhop.domain.context import DomainContext
from memhop.domain.mirrors import Mirrors
from memhop.domain.warm import Part
from memhop.engine import Engine
from memhop.index.l2meta import L2Meta
from memhop.index.l4 import L4Index
from memhop.index.recall_state import RecallState, order_ids, packed_order
from memhop.records import ArchiveKind, ArchiveSlot, TopicSlot

__all__ = ["EVENT", "NEIGHBOURS", "OWN_WEIGHT", "ROW", "Refresh"]

OWN_WEIGHT = 2
"""A row's own track and lines count twice; what it folded and its neighbours' lines once."""
NEIGHBOURS = 1
"""How many surface rows on each side lend a row their lines (a turn is read in context)."""

ROW = 0
EVENT = 1
EVERY_ROW = Part(None, frozenset())
"""A reading of a scene's every row (and no topic's records)."""


def _surface_row(topics: L2Meta, topic_id: int) -> int | None:
    """The listed row that shows ``topic_id``: its topmost ancestor that still exists."""
    row = topics.get(topic_id)
    if row is None:
        return None
    seen = {row.id}
    while row.parent_id is not None:
        parent = topics.get(row.parent_id)
        if parent is None or parent.id in seen:
            break
        seen.add(parent.id)
        row = parent
    return row.id


class Refresh:
    """One pass over the changed topics; scene child maps are made once per pass.

    Over the domain's full mirrors, or, in a warm domain (``scenes`` given:
    the scene of each topic the pass starts from), over its scene views, so
    that a recall need not wait for the domain's full build.
    """

    def __init__(
        self,
        engine: Engine,
        ctx: DomainContext,
        state: RecallState,
        scenes: dict[int, int] | None = None,
    ) -> None:
        self.engine = engine
        self.ctx = ctx
        self.state = state
        self.whole: Mirrors | None = ctx.mirrors if scenes is None else None
        self.scenes: dict[int, int] = {} if scenes is None else scenes
        self._children: dict[int, dict[int, list[TopicSlot]]] = {}
        self._surfaces: dict[int, list[int]] = {}
        # A line is in its own row's document, its neighbours' and a Dream row's: cut
        # once a pass. Rows are redone scene by scene, so the cut is kept a scene long.
        self._line_terms: dict[int, list[str]] = {}
        self._lines_scene = 0

    def mirrors(self, scene_id: int) -> Mirrors:
        """What answers reads of the scene: the full mirrors, or the scene's view."""
        if self.whole is not None:
            return self.whole
        return self.ctx.scene_mirrors(self.engine, scene_id)

    def topic_scene(self, topic_id: int) -> int | None:
        """The scene whose mirrors hold the topic (as listed, or as last indexed)."""
        if self.whole is not None:
            return self.whole.topics.scene_of(topic_id)
        found = self.scenes.get(topic_id)
        return self.state.row_scenes.get(topic_id) if found is None else found

    def reading(self, scene_id: int, part: Part = EVERY_ROW) -> Mirrors:
        """What answers the reads ``part`` names in one scene: the full mirrors, or a warm
        domain's view of the scene or reading of that part alone (a hit's row need not
        read the scene's other rows and lines)."""
        if self.whole is not None:
            return self.whole
        return self.ctx.scene_reading(self.engine, scene_id, part)

    def children(self, scene_id: int) -> dict[int, list[TopicSlot]]:
        kids = self._children.get(scene_id)
        if kids is None:
            topics = self.reading(scene_id).topics
            kids = self._children[scene_id] = topics.children_in_scene(scene_id)
        return kids

    def surface(self, scene_id: int) -> list[int]:
        """The scene's surface rows in order, as the topic mirror has them now."""
        order = self._surfaces.get(scene_id)
        if order is None:
            order = self._surfaces[scene_id] = [
                t.id for t in self.mirrors(scene_id).topics.surface(scene_id)
            ]
            if self.whole is None:
                self.scenes.update(dict.fromkeys(order, scene_id))
        return order

    def neighbours(self, row: TopicSlot) -> list[int]:
        """The surface rows beside ``row`` in its scene's order now."""
        return _beside(self.surface(row.scene_id), row.id)

    def indexed_neighbours(self, row_id: int) -> list[int]:
        """The rows whose lines the row's document holds, as it was last indexed."""
        scene_id = self.state.row_scenes.get(row_id)
        order = None if scene_id is None else self.state.orders.get(scene_id)
        return [] if order is None else _beside(order_ids(order), row_id)

    def lines(self, mirrors: Mirrors, topic_ids: Iterable[int]) -> list[ArchiveSlot]:
        """The topics' stored lines as ``mirrors`` list them, topic by topic in seq order
        (the cache answers by id)."""
        wanted = _line_ids(mirrors.contents, topic_ids)
        slots = self.ctx.slots.read(self.engine, self.ctx.agent_id, wanted, keep=False)
        read = {s.id_hash: s for s in slots}
        return [read[i] for i in wanted if i in read]

    def line_terms(self, scene_id: int, topic_ids: Iterable[int]) -> list[str]:
        """The terms of the topics' stored lines, topic by topic in seq order."""
        cut = self._line_terms
        if scene_id != self._lines_scene:
            cut.clear()
            self._lines_scene = scene_id
        wanted = _line_ids(self.mirrors(scene_id).contents, topic_ids)
        missing = [i for i in wanted if i not in cut]
        if missing:
            for slot in self.ctx.slots.read(self.engine, self.ctx.agent_id, missing, keep=False):
                cut[slot.id_hash] = self.state.terms.of(slot.content)
        terms: list[str] = []
        for line_id in wanted:
            terms += cut.get(line_id, ())  # a line that will not read adds nothing
        return terms

    def listed(self, topic_id: int) -> TopicSlot | None:
        """The topic's row as its scene's mirrors list it now (None: none, or no scene)."""
        scene_id = self.topic_scene(topic_id)
        return None if scene_id is None else self.mirrors(scene_id).topics.get(topic_id)

    def run(self, changed: set[int]) -> None:
        state = self.state
        rows: set[int] = set()
        for topic_id in changed:
            # A row's own topic is its member without an entry in row_of. A turn folded
            # since it was indexed has both: its own row's document (gone now) and, once
            # an earlier pass of the same changes redid the row it folded into, an entry
            # in row_of (a pass's changes are redone a few topics a hold).
            indexed = topic_id if (ROW, topic_id) in state.index else None
            scene_id = self.topic_scene(topic_id)
            topics = None if scene_id is None else self.mirrors(scene_id).topics
            now = None if topics is None else _surface_row(topics, topic_id)
            for row in (state.row_of.get(topic_id), indexed, now):
                if row is not None:
                    rows.add(row)
                    if scene_id is not None and self.whole is None:
                        self.scenes.setdefault(row, scene_id)
        # A row's document holds its neighbours' lines: the rows beside a changed one,
        # before the change and after it, are redone too.
        scenes: set[int] = set()  # whose order, as indexed, the pass changes
        for row_id in list(rows):
            rows.update(self.indexed_neighbours(row_id))
            listed = self.listed(row_id)
            if listed is not None and listed.depth == 1:
                rows.update(self.neighbours(listed))
        for row_id in rows:
            scene_id = state.row_scenes.get(row_id)
            if scene_id is not None:
                scenes.add(scene_id)
        # Scene by scene, so that a scene's lines are cut once (line_terms).
        for row_id in sorted(rows, key=lambda r: (self.topic_scene(r) or 0, r)):
            scene_id = self.redo_row(row_id)
            if scene_id is not None:
                scenes.add(scene_id)
        for scene_id in scenes:
            order = self.surface(scene_id)
            if order:
                state.orders[scene_id] = packed_order(order)
            else:
                state.orders.pop(scene_id, None)
        for topic_id in sorted(changed):
            self.redo_events(topic_id)
        hook = self.ctx.on_repack_due
        if hook is not None and state.index.repack_due:  # done off the lock, not here
            hook(state.index)

    def redo_row(self, row_id: int) -> int | None:
        """Index the row anew (or drop it); return the scene it is indexed under now."""
        state = self.state
        for old in state.members.pop(row_id, ()):
            if state.row_of.get(old) == row_id:
                state.row_of.discard(old)
        row = self.listed(row_id)
        if row is None or _surface_row(self.mirrors(row.scene_id).topics, row_id) != row_id:
            state.index.remove((ROW, row_id))
            state.row_scenes.discard(row_id)
            return None
        members = self.descendants(row)
        scene_id = row.scene_id
        cut = state.terms.of
        own = [t for k in row.fused_keywords for t in cut(k)]
        own += self.line_terms(scene_id, [row.id])
        terms = own * OWN_WEIGHT
        terms += [t for m in members for k in m.fused_keywords for t in cut(k)]
        terms += self.line_terms(scene_id, [m.id for m in members])
        terms += self.line_terms(scene_id, self.neighbours(row))
        state.index.put((ROW, row_id), scene_id, row.user_timestamp, terms)
        state.row_scenes.put(row_id, scene_id)
        if members:
            state.members[row_id] = tuple(m.id for m in members)
            for member in members:
                state.row_of.put(member.id, row_id)
        return scene_id

    def descendants(self, row: TopicSlot) -> list[TopicSlot]:
        return _descendants_in(self.children(row.scene_id), row)

    def redo_events(self, topic_id: int) -> None:
        state = self.state
        indexed = state.events.pop(topic_id, ())
        for event_id in (indexed,) if isinstance(indexed, int) else indexed:
            state.index.remove((EVENT, event_id))
        held_in = self.topic_scene(topic_id)
        if held_in is None:
            turn = self.ctx.open_turn
            held_in = turn.scene_id if turn is not None and turn.topic_id == topic_id else 0
        mirrors = self.mirrors(held_in)
        wanted = mirrors.contents.ids_of(topic_id, ArchiveKind.EVENT)
        if not wanted:
            return
        scene_id = _events_scene(self.ctx, mirrors, topic_id)
        slots = self.ctx.slots.read(self.engine, self.ctx.agent_id, wanted, keep=False)
        for slot in slots:
            terms = state.terms.of(slot.event_type) + state.terms.of(slot.content)
            state.index.put((EVENT, slot.id_hash), scene_id, slot.created_at, terms)
        if len(slots) == 1:
            state.events[topic_id] = slots[0].id_hash
        elif slots:
            state.events[topic_id] = tuple(s.id_hash for s in slots)


def _descendants_in(kids: dict[int, list[TopicSlot]], row: TopicSlot) -> list[TopicSlot]:
    """The rows under ``row``, given each row's children in its scene, as ``derived_from``
    lists them."""
    found: list[TopicSlot] = []
    stack = list(kids.get(row.id, ()))
    seen = {row.id}
    while stack:
        topic = stack.pop()
        if topic.id in seen:
            continue
        seen.add(topic.id)
        found.append(topic)
        stack += kids.get(topic.id, ())
    return sorted(found, key=lambda t: (t.user_timestamp, t.id))  # as derived_from lists them


def _line_ids(contents: L4Index, topic_ids: Iterable[int]) -> list[int]:
    return [i for t in topic_ids for i in contents.ids_of(t, ArchiveKind.UTTERANCE)]


def _beside(order: list[int], row_id: int) -> list[int]:
    """The rows beside ``row_id`` in ``order`` (``NEIGHBOURS`` each side); none if absent."""
    try:
        at = order.index(row_id)
    except ValueError:
        return []
    return [*order[max(at - NEIGHBOURS, 0) : at], *order[at + 1 : at + 1 + NEIGHBOURS]]


def _events_scene(ctx: DomainContext, mirrors: Mirrors, topic_id: int) -> int:
    """The scene a topic's events are indexed under: its row's; the open turn's for an
    event of the still-open turn; 0 for a turn that never closed."""
    scene_id = mirrors.topics.scene_of(topic_id)
    if scene_id is not None:
        return scene_id
    turn = ctx.open_turn
    return turn.scene_id if turn is not None and turn.topic_id == topic_id else 0
