"""A Dream pass's writes are made durable after its holds of the domain lock, never under one.

A turn that waits for the lock then waits for Dream's CPU, not for the disk.
fsyncs are seen at the engine's one seam (``storefile.fsync_file``); the
domain lock is wrapped to know which thread holds it.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any
from unittest import mock

import memhop
from memhop.engine import storefile
from memhop.root import dreams

TS = 1_700_000_000_000
SEED = memhop.ProfileInput(name="a")
# No pass starts on its own, and no compaction follows one (it holds every domain lock).
QUIET = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)


class OwnedLock:
    """The domain lock, knowing its holder."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.owner: int | None = None

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        ok = bool(self.inner.acquire(blocking, timeout))
        if ok:
            self.owner = threading.get_ident()
        return ok

    def release(self) -> None:
        self.owner = None
        self.inner.release()

    def locked(self) -> bool:
        return bool(self.inner.locked())

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *_: object) -> None:
        self.release()


def _fill(me: memhop.Session) -> None:
    for scene in range(3):
        me.search(new_scene=True)
        for i in range(4):
            said = f"we planned the hiking trip number {scene} day {i} with the kids"
            me.update(input=said, output="sounds like a lovely weekend", created_at=TS + i)


def test_a_pass_writes_without_an_fsync_under_the_domain_lock(meh_path: str) -> None:
    with memhop.open(meh_path, memhop.LocalModel(), QUIET, profile=SEED) as db:
        me = db.primary()
        _fill(me)
        ctx = db._root._contexts[0]
        lock = OwnedLock(ctx.lock)
        ctx.lock = lock  # type: ignore[assignment]
        under: list[bool] = []

        def fsync(fd: int) -> None:
            under.append(lock.owner == threading.get_ident())
            os.fsync(fd)

        with mock.patch.object(storefile, "fsync_file", side_effect=fsync):
            me.update(input="one more line", output="noted", created_at=TS + 9)
            turn_syncs = list(under)
            under.clear()
            report = me.dream()
        # The detector sees a holder: the turn's own fsync is made under the lock, as a
        # call's write is acknowledged only once durable.
        assert turn_syncs
        assert all(turn_syncs)
        assert report.l1_nodes_added > 0  # the pass wrote
        assert under, "the pass's writes were made durable"
        assert not any(under), "no fsync of the pass under the domain lock"
        engine = db._root.engine
        assert engine._file.durable_end == engine._file.size


def test_what_a_pass_wrote_reads_back_after_a_reopen(meh_path: str) -> None:
    with memhop.open(meh_path, memhop.LocalModel(), QUIET, profile=SEED) as db:
        me = db.primary()
        _fill(me)
        report = me.dream()
        nodes = {n.id for n in me.list_l1()}
    assert report.l1_nodes_added == len(nodes) > 0
    with memhop.open(meh_path, memhop.LocalModel(), QUIET) as db:
        assert {n.id for n in db.primary().list_l1()} == nodes


def test_a_call_that_finds_the_lock_held_marks_it_wanted_until_it_has_it(meh_path: str) -> None:
    with memhop.open(meh_path, memhop.LocalModel(), QUIET, profile=SEED) as db:
        me = db.primary()
        me.search(new_scene=True)
        ctx = db._root._contexts[0]
        assert not ctx.lock_wanted  # a call that finds the lock free marks nothing
        done = threading.Event()
        with ctx.lock:  # as a Dream hold holds it
            caller = threading.Thread(target=lambda: (me.list_scenes(), done.set()))
            caller.start()
            for _ in range(500):
                if ctx.lock_wanted:
                    break
                threading.Event().wait(0.001)
            assert ctx.lock_wanted
            assert not done.is_set()
        caller.join(5)
        assert done.is_set()
        assert not ctx.lock_wanted


def test_a_pass_lets_a_waiting_call_take_the_lock_before_its_next_hold(meh_path: str) -> None:
    with memhop.open(meh_path, memhop.LocalModel(), QUIET, profile=SEED) as db:
        me = db.primary()
        me.search(new_scene=True)
        ctx = db._root._contexts[0]
        ctx.lock_wanted = True
        threading.Timer(0.002, lambda: setattr(ctx, "lock_wanted", False)).start()
        t0 = time.monotonic()
        dreams._hand_over(ctx)  # waits for the call to have the lock
        assert not ctx.lock_wanted
        assert time.monotonic() - t0 < dreams.HANDOVER_S * 10
        ctx.lock_wanted = True  # nobody takes it: the pass goes on after HANDOVER_S
        t0 = time.monotonic()
        dreams._hand_over(ctx)
        assert time.monotonic() - t0 >= dreams.HANDOVER_S
        ctx.lock_wanted = False


def test_a_long_pass_rests_after_a_hold_only_while_the_host_makes_calls(meh_path: str) -> None:
    with memhop.open(meh_path, memhop.LocalModel(), QUIET, profile=SEED) as db:
        me = db.primary()
        _fill(me)
        ctx = db._root._contexts[0]
        rests: list[float] = []
        with mock.patch.object(dreams.time, "sleep", side_effect=rests.append):
            calls = ctx.host_calls
            me.dream()  # a short pass: it never rests
            assert ctx.host_calls == calls  # the pass's own holds are not the host's calls
            assert rests == []
            # a pass that held long, and saw the calls made so far
            long = dreams.PassHolds(held_s=dreams.PACE_AFTER_S, calls=ctx.host_calls)
            dreams._pace(ctx, 0.004, long)  # no call since the pass's last hold: no rest
            assert rests == []
            me.list_scenes()  # a call of the host's: counted
            assert ctx.host_calls == calls + 1
            dreams._pace(ctx, 0.004, dreams.PassHolds())  # a short pass does not rest
            assert rests == []
            me.list_scenes()
            dreams._pace(ctx, 0.004, long)  # a hold of 4 ms ended: the long pass rests as long
            assert rests == [0.004]
            me.list_scenes()
            dreams._pace(ctx, 3.0, long)  # never longer than PACE_MAX_S
            assert rests == [0.004, dreams.PACE_MAX_S]
