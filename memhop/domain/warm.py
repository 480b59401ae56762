"""A domain's first reads before its mirrors are built: each scene from the scene map.

The first call on a domain builds every mirror from the domain's records:
seconds at 10^5 turns. When the scene map (``memhop.index.scene_map``) holds
the domain, its context starts *warm* instead: ``search`` and
``scene_context`` read their scene from the records the map names under it,
plus those the log gained since the map was written, the turn's
``append_archive`` and ``update`` write through that view, and the full
build runs on a thread of its own once the first such call is done; every
call on the whole domain waits for the build.

Contract:
- A map is trusted only while the file still ends in the index snapshot it
  ended in when the map was written (the snapshot's CRC is the map's seal:
  the same records at the same offsets, nothing since), or else gives the
  map's digest up to its ``covered_end`` with a log that walks frame by frame
  from there to the record end. A compacted, replaced or damaged file is
  refused, and the domain is built in full.
- Every record a view uses is read from the engine, decoded to what the
  full build's decoders give (its content slots in full, kept in the
  domain's slot cache for the scene's text), and a row is kept only if its
  payload puts it in the scene; so a scene's view answers what the full
  mirrors answer for that scene.
- A view takes only its scene's turn writes (a content line, a topic row),
  through ``DomainContext.apply``, which queues each for the full build: a
  change puts a record as written, so one the build already read changes
  nothing, and the build holds every turn once adopted. Any other write
  waits for the build.
- The map file is rewritten at close from every domain whose build finished;
  any other domain keeps its map (still exact for the file up to its
  ``covered_end``). A compaction deletes the file.
"""

from __future__ import annotations

import _thread
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from memhop.domain.map_tail import Tail, current_since, trusted_tail
from memhop.domain.mirrors import Mirrors
from memhop.domain.slot_cache import SlotCache
from memhop.engine import Engine
from memhop.ids import content_id
from memhop.index.l2meta import L2Meta
from memhop.index.l4 import L4Index
from memhop.index.plans import PlanTrees
from memhop.index.recall_state import RecallState
from memhop.index.scene_map import DomainMap
from memhop.layers import archive, plan, topic_rows
from memhop.records import SEQ_USER, ArchiveSlot, SceneSlot

__all__ = ["Part", "WarmStart"]

log = logging.getLogger("memhop")

BUILD_GRACE_S = 0.2
"""How long a warm domain's build waits before it starts, unless a call waits for it: the
first calls of a session (its first recall, reading the saved index) run alone."""


@dataclass(frozen=True, slots=True)
class Part:
    """What a reading of a scene read: its rows (None: every row) and the records of the
    topics in ``lines``."""

    rows: frozenset[int] | None
    lines: frozenset[int]

    def covers(self, other: Part) -> bool:
        rows_held = self.rows is None or (other.rows is not None and other.rows <= self.rows)
        return rows_held and other.lines <= self.lines

    def joined(self, other: Part) -> Part:
        rows = None if self.rows is None or other.rows is None else self.rows | other.rows
        return Part(rows, self.lines | other.lines)


def _view(
    engine: Engine,
    agent_id: int,
    section: DomainMap,
    tail: Tail,
    scene_id: int,
    part: Part | None = None,
) -> tuple[Mirrors, list[ArchiveSlot]] | None:
    """The mirrors of one scene's records, and its content slots as read for them (a read of
    the scene wants their text next); None if a record breaks the map's rules. With
    ``part``, only the rows and the topics' records it names."""
    try:
        listed = set(section.topics_of(scene_id) + tail.topics.get(scene_id, []))
    except ValueError as exc:  # a range decode did not check
        log.warning("scene map of agent %016x not used: %s", agent_id, exc)
        return None
    if part is not None and part.rows is not None:
        listed &= part.rows
    misplaced: list[int] = []
    rows = [
        row
        for row in topic_rows.topic_rows_of(engine, agent_id, sorted(listed), misplaced)
        if row.scene_id == scene_id  # a row listed here may have moved since
    ]
    if misplaced:
        return None
    members: set[int] = set()
    for row in rows:
        if part is not None and row.id not in part.lines:
            continue
        try:
            members.update(section.members_of(row.id, scene_id))
        except ValueError as exc:  # a range decode did not check
            log.warning("scene map of agent %016x not used: %s", agent_id, exc)
            return None
        members.update(tail.members.get(row.id, ()))
        # Provenance looks slot 1 up by its address, whatever topic its payload names.
        members.add(content_id(row.id, SEQ_USER))
    slots = archive.read_contents(engine, agent_id, members)
    # Members are content lines or plan steps: only the ids no line answered can be steps.
    steps = sorted(members.difference([s.id_hash for s in slots]))
    mirrors = Mirrors(
        topics=L2Meta.from_topics(rows),
        contents=L4Index.from_records(slots),
        plans=PlanTrees.from_nodes(plan.plan_nodes_of(engine, agent_id, steps)),
    )
    return mirrors, slots


def _watch(view: Mirrors, noted: set[int], scene_id: int) -> None:
    """Note from now on which topics ``view`` changes, and that it changed any in ``noted``."""
    for journal in (view.topics.journal, view.contents.journal):
        journal.drain()
        journal.report_to(noted, scene_id)


class _Fill:
    """A function run on a daemon thread of its own, and the event set when it returns.

    Started without waiting for the thread to run (``threading.Thread.start``
    waits for that, a few hundred microseconds the first read would pay).
    """

    def __init__(self, run: Callable[[], None]) -> None:
        self.done = threading.Event()
        _thread.start_new_thread(self._main, (run,))

    def _main(self, run: Callable[[], None]) -> None:
        try:
            run()
        finally:
            self.done.set()

    def join(self) -> None:
        self.done.wait()


class WarmStart:
    """A warm domain's scene views and the full build that replaces them.

    The views are read under the domain's lock; the build is started, waited
    for and settled from any thread (``_mu`` guards its thread).
    """

    def __init__(self, section: DomainMap, build: Callable[[], Mirrors]) -> None:
        self.section = section
        self._build = build
        self._mu = threading.Lock()
        self._tail: Tail | None = None
        self._refused = False
        self._views: dict[int, Mirrors] = {}
        # Per scene without a view: its rows and the records of the topics read so far
        # (``reading``), for a recall's hits; given up once a view is made.
        self._readings: dict[int, tuple[Mirrors, Part]] = {}
        self._noted: set[int] = set()  # the scenes whose views noted a change since a drain
        # Turn writes the views took, for the full build (``DomainContext.apply``), and how
        # many of them the build has taken (``_catch_up``).
        self.pending: list[Callable[[Mirrors], object]] = []
        self._taken = 0
        self._fill: _Fill | None = None
        self._hurry = threading.Event()  # set: someone waits for the build, so no grace
        self._built: Mirrors | None = None
        self._error: BaseException | None = None
        # The recall state served from the views (memhop.root.recall_warm), once taken
        # from the recall file; the full build takes it over (``DomainContext._adopt``).
        self.recall: RecallState | None = None
        self.recall_refused = False  # the recall file did not serve: recall waits for the build

    def check(self, engine: Engine, agent_id: int) -> None:
        """Check the map against the file now, before a call writes to it."""
        self._trusted(engine, agent_id)

    def _trusted(self, engine: Engine, agent_id: int) -> Tail | None:
        """The tail since the map, once the map is checked; None when it cannot be trusted."""
        if self._tail is None and not self._refused:
            self._tail = trusted_tail(engine, agent_id, self.section)
            self._refused = self._tail is None
        return self._tail

    def scene_mirrors(
        self, engine: Engine, agent_id: int, scene_id: int, slots: SlotCache
    ) -> Mirrors | None:
        """One scene's view, None when the map cannot serve it (then wait for the build).

        The content slots read to make it are kept in ``slots``, so the scene's
        text is decoded once.
        """
        if self._built is not None:
            return None
        view = self._views.get(scene_id)
        if view is None:
            tail = self._trusted(engine, agent_id)
            if tail is None:
                return None
            made = _view(engine, agent_id, self.section, tail, scene_id)
            if made is None:
                self._refused = True
                return None
            view, read = made
            if self.recall is not None:  # what the view takes from now on is noted
                _watch(view, self._noted, scene_id)
            self._views[scene_id] = view
            self._readings.pop(scene_id, None)
            slots.remember(engine, agent_id, read)
        return view

    def reading(
        self,
        engine: Engine,
        agent_id: int,
        scene_id: int,
        part: Part,
        slots: SlotCache,
    ) -> Mirrors | None:
        """What answers the reads ``part`` names in one scene: its view if one is made, else
        those rows and those topics' records alone (a recall's hit reads a row or two of
        a scene, and a scene's lines cost most of its view). Kept while the scene has no
        view: a scene takes writes through its view only, so what was read stays true.
        None when the map cannot serve it."""
        if self._built is not None:
            return None
        view = self._views.get(scene_id)
        if view is not None:
            return view
        held = self._readings.get(scene_id)
        if held is not None:
            if held[1].covers(part):
                return held[0]
            part = held[1].joined(part)
        tail = self._trusted(engine, agent_id)
        if tail is None:
            return None
        made = _view(engine, agent_id, self.section, tail, scene_id, part)
        if made is None:
            self._refused = True
            return None
        mirrors, read = made
        self._readings[scene_id] = (mirrors, part)
        slots.remember(engine, agent_id, read)
        return mirrors

    def watch_views(self) -> None:
        """Note from now on which topics each view changes (``drain_views``)."""
        for scene_id, view in self._views.items():
            _watch(view, self._noted, scene_id)

    def drain_views(self) -> dict[int, int]:
        """The topics the views changed since the last drain, each with its scene (only
        the views that noted one are read: a recall does not grow with the views)."""
        changed: dict[int, int] = {}
        for scene_id in self._noted:
            view = self._views[scene_id]
            for topic_id in view.topics.journal.drain() | view.contents.journal.drain():
                changed[topic_id] = scene_id
        self._noted.clear()
        return changed

    def view_of(self, scene_id: int) -> Mirrors | None:
        """The view of a scene made so far (with every turn write it took), if any."""
        return self._views.get(scene_id)

    def current_scene(self, engine: Engine, agent_id: int) -> tuple[bool, SceneSlot | None]:
        """(known, the scene last in use), known only when the map answers it."""
        tail = self._trusted(engine, agent_id)
        if tail is None:
            return False, None
        return current_since(engine, agent_id, self.section, tail)

    def start(self) -> _Fill | None:
        """Start the full build on a thread of its own, unless one ran or runs; return it."""
        with self._mu:
            if self._fill is None and self._built is None:
                self._fill = _Fill(self._run)
            return self._fill

    def _run(self) -> None:
        # The domain's first calls (a recall after the first search, say) run before the
        # build takes the interpreter from them, unless a call needs the build itself.
        self._hurry.wait(BUILD_GRACE_S)
        self._taken = 0  # a build again after one failed reads the file anew
        try:
            built = self._build()
            self._catch_up(built)
            self._built = built
        except BaseException as exc:  # handed to whoever waits for the build
            self._error = exc

    def _catch_up(self, built: Mirrors) -> None:
        """Apply to ``built`` the turn writes the views took while it ran, in order and
        without the domain lock: nothing reads a build before it is published, and the
        writers only append. The hold that adopts it takes the few after (``left``); a
        restart under a busy host left it 5,000 of them, 14-18 ms in that one hold."""
        pending = self.pending
        while self._taken < len(pending):
            pending[self._taken](built)
            self._taken += 1

    def left(self) -> list[Callable[[Mirrors], object]]:
        """The turn writes the finished build has yet to take, in the order they were made."""
        return self.pending[self._taken :]

    def running(self) -> bool:
        """Whether a build is in flight."""
        return self._fill is not None and not self._fill.done.is_set()

    def join(self) -> Mirrors:
        """The full mirrors: wait for the build, starting it if need be.

        A build that failed raises here, to one waiter; the next call builds again.
        """
        self._hurry.set()
        fill = self.start()
        if fill is not None:
            fill.join()
        with self._mu:
            built, error = self._built, self._error
            if built is None and self._fill is fill:
                self._fill, self._error = None, None
        if built is not None:
            return built
        if error is not None and self._fill is None:
            raise error
        return self.join()  # another waiter took the error and started the build again

    def result(self) -> Mirrors | None:
        """The mirrors of a build that succeeded, without waiting."""
        return self._built

    def settle(self) -> None:
        """Wait for a build in flight, if any (its outcome is kept for ``join``)."""
        self._hurry.set()
        with self._mu:
            fill = self._fill
        if fill is not None:
            fill.join()
