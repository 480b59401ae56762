"""How a domain's build shares the interpreter with the calls that run beside it."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = [
    "BUILD_PAUSE_S",
    "BUILD_SHARE",
    "BUILD_YIELD_S",
    "LEAST_WAY_S",
    "SharedPace",
    "make_way",
]

BUILD_SHARE = 1 / 2
"""The least share of the wall time a build keeps while calls come without pause. A
reopened domain's build at 10^5 turns is 4.3 s of CPU alone; made way for at every chunk,
it never ended beside a host that called back to back (20,000 turns, and its Dream passes
waited for it all along). The host's calls are slower until it ends (its scenes served
from the map, a recall's hits read from the file), so the build gets no less than two
threads that share the interpreter get anyway."""

BUILD_YIELD_S = 0.05
"""The longest a build (or a repack) waits for the calls in flight at once."""

LEAST_WAY_S = 0.002
"""The least a build makes way for at once. Each time it lets go of the interpreter, a host
running Python keeps it until its switch interval (5 ms) or its next wait: handing it over
at every chunk cost the build more than its share of the wall in those waits alone."""


BUILD_PAUSE_S = 0.0002
"""A build's pause between chunks of its reads while a call is in flight: long enough for
the call's thread to take the interpreter (a pause of 0 seldom hands it over)."""


def make_way(busy: Callable[[], bool], longest: float = 0.0) -> None:
    """Between a build's or a compaction's chunks: pause while ``busy()`` (a call is in
    flight), for ``longest`` seconds at most (0: one short pause).

    A build reads every record of its domain, maybe beside a turn (a warm domain
    builds while its scenes are served). Without the pause, each time the turn's
    thread waits (for the engine lock, a write, an fsync) it gets the interpreter
    back only at the build's next switch interval (5 ms): 0.2 s for a first turn at
    10^5 turns. A build waits for the call to end, as long as ``SharedPace`` allows:
    a call running Python for a while (a first recall, taking or decoding its saved
    state) would otherwise share the interpreter with it. A compaction's copy pauses
    once, so that it ends while calls go on.
    """
    deadline = time.monotonic() + longest
    while busy():
        time.sleep(BUILD_PAUSE_S)
        if time.monotonic() >= deadline:
            return


class SharedPace:
    """A build's ``pace``, called between two chunks of its work: make way for the calls in
    flight (``make_way(longest)`` waits while any is, ``longest`` seconds at most) while the
    build is ahead of ``share`` of the wall time, by ``LEAST_WAY_S`` or more.

    What the build did not spend on CPU between two calls (its waits for the interpreter
    and for calls to end) was the host's. The lead is kept within ``longest`` either way:
    the first calls after an open (and those of a host that pauses now and then) go first
    for up to ``longest``, and a build that fell behind does not starve the host after.
    """

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
        self._ratio = (1 - share) / share  # the host's time a second of the build's CPU buys
        self._wall, self._cpu = wall, cpu
        self._lead = longest
        self._wall_at, self._cpu_at = wall(), cpu()

    def __call__(self) -> None:
        wall, cpu = self._wall(), self._cpu()
        worked = cpu - self._cpu_at
        lead = self._lead + worked * self._ratio - (wall - self._wall_at - worked)
        self._lead = max(-self._longest, min(lead, self._longest))
        self._wall_at, self._cpu_at = wall, cpu  # the wait below is the next call's to count
        if self._lead >= LEAST_WAY_S:
            self._make_way(self._lead)
