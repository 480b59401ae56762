"""The threads background Dream passes run on: named per scene, a few per domain at a time.

A pass is asked for per (domain, scene) and runs on a thread named
``memhop-dream-<agent hex>-<scene hex>``; the domain's own upkeep (its recall
index's repack: ``memhop.root.recall_upkeep``) takes the key of scene 0, which
no scene has, on a thread named ``memhop-recall-<agent hex>``. At most one
runs per (domain, scene), and at most ``PASSES_PER_DOMAIN`` per domain. Passes
of one domain take turns under its lock anyway; two in flight let one wait on
the model while the other holds. A pass asked for beyond that waits in its
domain's queue (one entry a scene, the last body asked) and runs when one
ends, on its thread: a domain whose first pass waits (for the domain's build
after a reopen, say) holds two threads, not one for every scene its host
leaves meanwhile.

Lock order: the mutex here is a leaf (nothing is taken under it), so passes
are asked for from inside a domain lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["DOMAIN_UPKEEP", "JOIN_TIMEOUT_S", "PASSES_PER_DOMAIN", "DreamThreads", "thread_name"]

log = logging.getLogger("memhop.dream")

PASSES_PER_DOMAIN = 2
JOIN_TIMEOUT_S = 10.0
"""How long ``close`` waits for background passes in all (a model request on the wire is cut at
close, so a pass ends well within it; a request still connecting is bounded by its timeout)."""

DOMAIN_UPKEEP = 0
"""The scene key of a domain's upkeep, not of a scene's pass (scene id 0 is reserved)."""

Key = tuple[int, int]  # (agent id, scene id)
Job = tuple[Key, Callable[[], object]]


def thread_name(agent_id: int, scene_id: int) -> str:
    if scene_id == DOMAIN_UPKEEP:
        return f"memhop-recall-{agent_id:016x}"
    return f"memhop-dream-{agent_id:016x}-{scene_id:016x}"


class DreamThreads:
    """Background passes in flight and waiting, per (domain, scene); joined at close."""

    def __init__(self, per_domain: int = PASSES_PER_DOMAIN) -> None:
        if per_domain < 1:
            msg = f"per_domain must be at least 1, got {per_domain}"
            raise ValueError(msg)
        self._per_domain = per_domain
        self._mu = threading.Lock()
        self._running: dict[Key, threading.Thread] = {}
        # Per domain, the passes asked for and not begun, in the order asked (a scene once,
        # with the last body asked): waiting for a place, for their scene's pass in flight
        # to end, or for a resume.
        self._queued: dict[int, dict[int, Callable[[], object]]] = {}
        self._closed = False
        self._pauses = 0

    def start(self, agent_id: int, scene_id: int, body: Callable[[], object]) -> bool:
        """Start ``body`` on a named thread now if it may; True if started.

        Asked while the scene's pass runs, the last body asked runs once more after it:
        the pass in flight may have looked at the scene before what asked for it now (the
        host leaving the scene). While its domain runs ``PASSES_PER_DOMAIN`` passes, or
        while paused, the body waits its turn (the last asked for a scene).
        """
        with self._mu:
            if self._closed:
                return False
            self._queued.setdefault(agent_id, {})[scene_id] = body
            return (agent_id, scene_id) in self._next(agent_id)

    def _launch(self, key: Key, body: Callable[[], object]) -> None:
        """Start a thread for ``body`` (called holding ``_mu``)."""
        thread = threading.Thread(
            target=self._run, args=(key, body), name=thread_name(*key), daemon=True
        )
        self._running[key] = thread
        thread.start()

    def _run(self, key: Key, body: Callable[[], object]) -> None:
        """Run ``body``, then the domain's queued passes while there are (one thread a place:
        renamed for each pass, so that the threads alive are the passes in flight)."""
        job: Job | None = (key, body)
        while job is not None:
            key, body = job
            threading.current_thread().name = thread_name(*key)
            try:
                body()
            except BaseException:
                self._ended(key, go_on=False)  # the queue goes on, on threads of its own
                raise
            job = self._ended(key, go_on=True)

    def _ended(self, key: Key, *, go_on: bool) -> Job | None:
        """A pass ended: free its place; with ``go_on``, the next queued pass of its domain
        for this thread to run (its place taken), if any."""
        with self._mu:
            del self._running[key]
            job = self._take(key[0]) if go_on else None
            if job is not None:
                self._running[job[0]] = threading.current_thread()
            self._next(key[0])  # any other place free (none, unless a pause held them)
        return job

    def _take(self, agent_id: int) -> Job | None:
        """The domain's first queued pass that may begin now, if any (holding ``_mu``)."""
        queued = self._queued.get(agent_id)
        if not queued or self._closed or self._pauses:
            return None
        if sum(a == agent_id for a, _ in self._running) >= self._per_domain:
            return None
        for scene_id in queued:
            if (agent_id, scene_id) not in self._running:  # else: once that pass ends
                body = queued.pop(scene_id)
                if not queued:
                    del self._queued[agent_id]
                return (agent_id, scene_id), body
        return None

    def _next(self, agent_id: int) -> list[Key]:
        """Start the domain's queued passes its free places allow (holding ``_mu``)."""
        started = []
        while (job := self._take(agent_id)) is not None:
            self._launch(*job)
            started.append(job[0])
        return started

    def pause(self) -> None:
        """Start no pass until the matching ``resume`` (pauses nest)."""
        with self._mu:
            self._pauses += 1

    def resume(self) -> None:
        """End one ``pause``; the last one starts the passes asked for meanwhile."""
        with self._mu:
            self._pauses -= 1
            if not self._pauses:
                for agent_id in list(self._queued):
                    self._next(agent_id)

    def close_and_join(self, timeout: float = JOIN_TIMEOUT_S) -> None:
        """Refuse new passes, drop those waiting, and wait (up to ``timeout`` in all) for
        those in flight."""
        with self._mu:
            self._closed = True
            self._queued.clear()
            threads = list(self._running.values())
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
            if thread.is_alive():
                log.warning("dream: %s still running at close", thread.name)
