"""How a domain's build shares the interpreter with the calls that run beside it."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["BUILD_SHARE", "SharedPace"]

BUILD_SHARE = 1 / 3
"""The least share of the interpreter a build keeps while calls come without pause. A
reopened domain's build at 10^5 turns is 4.3 s of CPU; made way for at every chunk, it
never ended beside a host that called back to back (20,000 turns, and its Dream passes
waited for it all along). With a third, it ends in about three times its CPU."""


class SharedPace:
    """A build's ``pace``, called between two chunks of its work: make way for the calls in
    flight (``make_way(longest)`` waits while any is, ``longest`` seconds at most), for at
    most ``(1 - share) / share`` times the CPU the build spent since it last made way,
    saved up to ``longest`` (so the first calls after an open go first, as do the calls of
    a host that pauses now and then)."""

    def __init__(
        self,
        make_way: Callable[[float], None],
        longest: float,
        share: float = BUILD_SHARE,
        *,
        wall: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.thread_time,
    ) -> None:
        if not 0 < share <= 1:
            msg = f"share must be in (0, 1], got {share}"
            raise ValueError(msg)
        self._make_way = make_way
        self._longest = longest
        self._ratio = (1 - share) / share
        self._wall, self._cpu = wall, cpu
        self._credit = longest
        self._worked_from = cpu()

    def __call__(self) -> None:
        # CPU, not wall time, for the work: waiting for the interpreter is not working.
        spent = self._cpu() - self._worked_from
        self._credit = min(self._credit + spent * self._ratio, self._longest)
        began = self._wall()
        self._make_way(self._credit)
        self._credit = max(self._credit - (self._wall() - began), 0.0)
        self._worked_from = self._cpu()
