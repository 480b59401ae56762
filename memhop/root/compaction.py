"""Compaction in place, from the root: copy beside the calls, then a short swap.

Responsibility: ``DB.compact()``, ``Session.purge_*`` and the dead-bytes
policy (``Defaults.compact_dead_ratio``, run after a delete, and after a Dream
pass once enough changed since it last measured) all end here.

Contract:
- Calls go on while the copy is made (``memhop.engine.inplace``, phases 1
  and 2: the engine lock is taken a chunk at a time, and the copy makes way,
  a short pause between chunks, while any domain's call is in flight). Only
  the swap holds every call: Dream is paused (a pass asked for meanwhile
  starts on resume; a pass in flight waits at its next step, each of which
  takes the domain lock), then the registry lock, every domain lock and the
  pool lock are held (``Root.quiesced``) while the frames written since the
  copy's last catch-up are replayed and the engine is replaced. Sessions keep
  working: current scenes, open turns and the mirrors are keyed by id, and
  ids survive a compaction; the slot caches, keyed by frame offset, are
  dropped, and so are the scene maps.
- One compaction of a file at a time: ``DB.compact()`` and a purge wait for
  one in flight, then run their own (a delete made before they were called
  is never copied); the policy leaves the file to the one in flight.
- A crash at any step leaves the old file or the new one, whole
  (``memhop.engine.inplace``). A failure leaves the old engine open and in use.
- The policy never raises: a delete or a Dream pass that succeeded is not
  turned into a failure by a compaction that could not run (it logs a
  warning, and the next trigger tries again).

Traps: a file renamed or replaced since it was opened is refused
(StorageIOError) rather than compacting whatever now has its name; so is a
file with damage met (CorruptionError): compacting it would drop for good
whatever the damage hides, which ``DB.salvage_to`` may still recover. Both
are checked before the copy and again at the swap. A close stops a copy in
flight at its next chunk (ClosedError).
"""

from __future__ import annotations

import contextlib
import logging
import os
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memhop.domain.slot_cache import SlotCache
from memhop.engine import Engine
from memhop.engine.inplace import Hooks, compact_in_place, occupancy
from memhop.errors import ClosedError, CorruptionError, MemHopError, StorageIOError
from memhop.root import dreams

if TYPE_CHECKING:  # the root calls in here; this module needs only the types
    from memhop.domain.context import DomainContext
    from memhop.root.root import Root

__all__ = ["PolicyMark", "compact", "compact_if_due", "identity"]

log = logging.getLogger("memhop.compaction")

POLICY_SAMPLE = 4096
"""Records the policy's first estimate reads (benches/compaction.py reports how far off it is)."""
POLICY_CHANGES = 100
"""After a Dream pass the policy measures again once one live record in this many was written
or deleted since it last did: a pass changes a few dozen, and a measure after each held the
engine's lock and took 2-4 ms of a turn's interpreter at 20,000 turns (threshold 8)."""


@dataclass(slots=True)
class PolicyMark:
    """Where the dead-bytes policy last measured: the engine it read (weakly: a compaction
    replaces it, and its index should go with it), that engine's count of writes and
    deletes then (``Engine.changes``), and the live records then. One a DB."""

    engine: weakref.ref[Engine] | None = None
    changes: int = 0
    records: int = 0

    def moved(self, engine: Engine) -> bool:
        """Whether enough changed since (a new engine, after a compaction, always has)."""
        if self.engine is None or self.engine() is not engine:
            return True
        return engine.changes() - self.changes >= max(1, self.records // POLICY_CHANGES)

    def measured(self, engine: Engine, changes: int, records: int) -> None:
        self.engine, self.changes, self.records = weakref.ref(engine), changes, records


def identity(path: str) -> tuple[int, int] | None:
    """The (device, inode) of ``path``, or None when it cannot be read."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _refuse_damage(root: Root) -> None:
    """Keep a damaged file as it is: a copy would drop what the damage hides, for good.

    A region the open skipped may have held records or tombstones; the old
    bytes are what salvage and forensics work from.
    """
    records, frames = root.engine.damage()
    if records or frames:
        msg = (
            f"compact: refused on a damaged file ({frames} damaged region(s) skipped at open,"
            f" {records} damaged record(s) met since); the file is kept as it is:"
            " DB.salvage_to(new_path) copies every record that verifies"
        )
        raise CorruptionError(msg)


def _check_file(root: Root) -> None:
    """Refuse a damaged file, or one moved or replaced since it was opened."""
    _refuse_damage(root)
    if identity(root.file_path) != root.file_identity:
        msg = f"compact: {root.file_path} was moved or replaced since it was opened"
        raise StorageIOError(msg)


def compact(root: Root, *, above: float = 0.0) -> bool:
    """Compact ``root``'s file in place; True if it ran.

    With ``above`` > 0 (the policy, whose sampled estimate put the dead bytes
    past that share) it does not run while another compaction of the file is in
    flight; without, it waits for one in flight first.
    """
    running = root.compacting
    if not running.acquire(blocking=above <= 0):
        return False
    try:
        root.check_open()
        _check_file(root)
        held: list[DomainContext] = []

        @contextlib.contextmanager
        def hold() -> Iterator[None]:
            root.dreams.pause()
            try:
                with root.quiesced() as contexts:
                    _check_file(root)  # damage met, or a move, while the copy was made
                    held[:] = contexts
                    yield
            finally:
                root.dreams.resume()

        def swapped(fresh: Engine) -> None:
            root.engine = fresh
            root.file_identity = identity(root.file_path)
            root.scene_maps.forget()  # the maps name the old file's bytes
            root.recall_file.deleted()  # so does the recall file
            fresh.watch_deletes(root.recall_file.deleted)
            for ctx in held:
                ctx.slots = SlotCache(ctx.slots.limit)  # keyed by frame offsets, all moved
                dreams.rebased(fresh, ctx)

        def pace() -> None:
            if root.closing.is_set():
                msg = "database is closed"
                raise ClosedError(msg)
            root.make_way()  # a short pause while a call is in flight

        compact_in_place(root.engine, root.file_path, Hooks(pace=pace, hold=hold, swapped=swapped))
    finally:
        running.release()
    root.heap.after_work()  # the copy's buffers and the old file's index are free now
    return True


def compact_if_due(root: Root, *, after_pass: bool = False) -> None:
    """Run the dead-bytes policy: compact when ``compact_dead_ratio`` (> 0) is passed.

    A sampled estimate runs without the domain locks (its cost hardly grows
    with the file); a file it puts past the ratio is compacted. ``after_pass``
    (a Dream pass asks): only once ``POLICY_CHANGES`` says enough changed since
    the last estimate. Failures are logged, never raised.
    """
    ratio = root.defaults.compact_dead_ratio
    if ratio <= 0 or root.closed:
        return
    engine, mark = root.engine, root.policy
    try:
        if after_pass and not mark.moved(engine):
            return
        # Read before the estimate: what changes while it reads counts toward the next.
        changes, records = engine.changes(), engine.stats()[1]
        dead = occupancy(engine, sample=POLICY_SAMPLE).dead_ratio
        mark.measured(engine, changes, records)
        if dead > ratio:
            compact(root, above=ratio)
    except ClosedError:
        return  # the file closed, or another compaction replaced the engine meanwhile
    except MemHopError as exc:
        log.warning("compact: the dead-bytes policy could not compact %s: %s", root.file_path, exc)
