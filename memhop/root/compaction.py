"""Compaction in place, from the root: quiesce the file, replace the engine, carry on.

Responsibility: ``DB.compact()``, ``Session.purge_*`` and the dead-bytes
policy (``Defaults.compact_dead_ratio``, run after a Dream pass and after a
delete) all end here.

Contract:
- Background Dream is paused first (a pass asked for meanwhile starts on
  resume; a pass in flight waits at its next step, each of which takes the
  domain lock), then the registry lock, every domain lock and the pool lock
  are held while the engine is replaced (``Root.quiesced``). Sessions keep
  working: current scenes, open turns and the mirrors are keyed by id, and
  ids survive a compaction; the slot caches, keyed by frame offset, are
  dropped.
- A crash at any step leaves the old file or the new one, whole
  (``memhop.engine.inplace``). A failure leaves the old engine open and in use.
- The policy never raises: a delete or a Dream pass that succeeded is not
  turned into a failure by a compaction that could not run (it logs a
  warning, and the next trigger tries again).

Traps: a file renamed or replaced since it was opened is refused
(StorageIOError) rather than compacting whatever now has its name; so is a
file with damage met (CorruptionError): compacting it would drop for good
whatever the damage hides, which ``DB.salvage_to`` may still recover.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from memhop.engine.inplace import compact_in_place, occupancy
from memhop.errors import ClosedError, CorruptionError, MemHopError, StorageIOError
from memhop.root.slot_cache import SlotCache

if TYPE_CHECKING:  # the root calls in here; this module needs only the type
    from memhop.root.root import Root

__all__ = ["compact", "compact_if_due", "identity"]

log = logging.getLogger("memhop.compaction")

POLICY_SAMPLE = 4096
"""Records the policy's first estimate reads (benches/compaction.py reports how far off it is)."""


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


def compact(root: Root, *, above: float = 0.0) -> bool:
    """Compact ``root``'s file in place; True if it ran.

    With ``above`` > 0 it runs only when dead bytes are more than that share
    of the file, measured once every call of this handle is held.
    """
    root.dreams.pause()
    try:
        with root.quiesced() as contexts:
            if above > 0 and occupancy(root.engine).dead_ratio <= above:
                return False
            _refuse_damage(root)
            if identity(root.file_path) != root.file_identity:
                msg = f"compact: {root.file_path} was moved or replaced since it was opened"
                raise StorageIOError(msg)
            root.engine = compact_in_place(root.engine, root.file_path)
            root.file_identity = identity(root.file_path)
            root.forget_scene_maps()  # the maps name the old file's bytes
            for ctx in contexts:
                ctx.slots = SlotCache(ctx.slots.limit)  # keyed by frame offsets, all moved
            return True
    finally:
        root.dreams.resume()


def compact_if_due(root: Root) -> None:
    """Run the dead-bytes policy: compact when ``compact_dead_ratio`` (> 0) is passed.

    A first, sampled estimate runs without the domain locks (its cost hardly
    grows with the file); only a file it puts past the ratio is quiesced and
    measured exactly. Failures are logged, never raised.
    """
    ratio = root.defaults.compact_dead_ratio
    if ratio <= 0 or root.closed:
        return
    try:
        if occupancy(root.engine, sample=POLICY_SAMPLE).dead_ratio > ratio:
            compact(root, above=ratio)
    except ClosedError:
        return  # the file closed, or another compaction replaced the engine meanwhile
    except MemHopError as exc:
        log.warning("compact: the dead-bytes policy could not compact %s: %s", root.file_path, exc)
