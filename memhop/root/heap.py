"""Handing the C heap's free pages back to the system after memhop's background work.

glibc's ``malloc`` gives memory back to the system only from the top of its
heap: what is freed below a block still in use stays resident. A long-lived
memory frees a great deal that way, each Dream pass's working sets and each
compaction's copy interleaved with the indexes that grow as turns come: at 10^5
turns of ``benches/steady.py``, 74 MiB of glibc's 171 MiB heap was free and
still resident. ``malloc_trim(0)`` returns every whole free page in it (the
blocks in use stay where they are; a page used again later costs a fault).

Contract:
- ``after_work()`` trims at most once per ``TRIM_INTERVAL_S`` of wall time
  (monotonic: the library's clock may be a replay's).
- A no-op when turned off (``Defaults.trim_heap``) or where the C library has
  no ``malloc_trim`` (musl, macOS, Windows).
- Call it with no memhop lock held: the trim runs without the interpreter's
  lock but takes glibc's arena locks, so another thread's allocation may wait
  for it (0.2-4 ms a trim at 30,000 turns).
- Each open DB paces its own (two DBs share no state): a process with many DBs
  whose passes run at once trims that many times as often, each finding less.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable

TRIM_INTERVAL_S = 10.0
"""The shortest wall time between two trims: a Dream pass ends every few turns under
load, and what a trim gives back is what was freed since the last one."""

Trim = Callable[[int], object]


def find_trim() -> Trim | None:
    """The C library's ``malloc_trim``, or None where there is none."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, TypeError):  # no such symbol, or no process handle
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


class HeapTrim:
    """One DB's pacing of ``malloc_trim`` after its background work."""

    __slots__ = ("_clock", "_due", "_mu", "_trim")

    def __init__(self, trim: Trim | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._trim = trim
        self._clock = clock
        self._mu = threading.Lock()
        self._due = 0.0

    def after_work(self) -> bool:
        """Trim unless one ran less than ``TRIM_INTERVAL_S`` ago; True when it trimmed."""
        trim = self._trim
        if trim is None:
            return False
        now = self._clock()
        with self._mu:  # two passes ending together trim once
            if now < self._due:
                return False
            self._due = now + TRIM_INTERVAL_S
        trim(0)
        return True
