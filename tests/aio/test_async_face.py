"""What only the async face adds: parity with the sync surface, the pool, the loop, cancellation."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memhop
import memhop.aio
from tests.llm.fake_server import FakeOpenAI, Step

TS = 1_700_000_000_000
NO_AUTO_DREAM = memhop.Defaults(scene_dream_topic_threshold=-1)


def _public(cls: type) -> dict[str, Any]:
    return {
        name: member
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and callable(member)
    }


@pytest.mark.parametrize(
    ("sync_cls", "async_cls"),
    [(memhop.Session, memhop.aio.AsyncSession), (memhop.DB, memhop.aio.AsyncDB)],
)
def test_every_sync_method_has_an_async_twin_with_its_signature(
    sync_cls: type, async_cls: type
) -> None:
    sync, twins = _public(sync_cls), _public(async_cls)
    assert sync, "no public methods found: the comparison proves nothing"
    missing = sorted(set(sync) - set(twins))
    assert not missing, f"{async_cls.__name__} lacks {missing}"
    for name, method in sync.items():
        twin = twins[name]
        assert inspect.iscoroutinefunction(twin), name
        ours = list(inspect.signature(twin).parameters)
        assert ours == list(inspect.signature(method).parameters), name


async def _open(path: Path, llm: Any = None, **kwargs: Any) -> memhop.aio.AsyncDB:
    model = memhop.LocalModel() if llm is None else llm
    profile = memhop.ProfileInput(name="primary")
    return await memhop.aio.open(str(path), model, NO_AUTO_DREAM, profile, **kwargs)


class BarrierModel:
    """A ``memhop.Model`` whose first two keyword calls must be inside it at the same time."""

    def __init__(self) -> None:
        self._local = memhop.LocalModel()
        self._lock = threading.Lock()
        self._gated = 2
        self.barrier = threading.Barrier(2, timeout=30)

    def extract_keywords(self, text: str, *, cancel: threading.Event | None = None) -> Any:
        with self._lock:
            gated, self._gated = self._gated > 0, self._gated - 1
        if gated:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError as exc:
                raise memhop.LLMError("the other domain's update never came in") from exc
        return self._local.extract_keywords(text, cancel=cancel)

    def consolidate(self, topics: Any, floor: int, *, cancel: threading.Event | None = None) -> Any:
        return self._local.consolidate(topics, floor, cancel=cancel)

    def distill(self, samples: Any, *, cancel: threading.Event | None = None) -> Any:
        return self._local.distill(samples, cancel=cancel)


def test_tasks_on_different_domains_run_at_the_same_time(tmp_path: Path) -> None:
    """Two updates meet inside the model (a barrier); then eight domains' turns interleave."""
    started: list[str] = []

    async def turns(session: memhop.aio.AsyncSession, n: int) -> None:
        for t in range(n):
            started.append(session.agent_id)
            await session.search()
            tag = f"{session.agent_id}-{t}"
            await session.update(input=f"from {tag}", output="ok", created_at=TS + t)

    async def main() -> tuple[list[str], list[list[str]]]:
        model = BarrierModel()
        async with memhop.aio.open(
            str(tmp_path / "many.meh"), model, NO_AUTO_DREAM, memhop.ProfileInput(name="p")
        ) as db:
            subs = [
                await db.sub_agent(model, memhop.ProfileInput(name=f"worker-{i}")) for i in range(8)
            ]
            # Without two calls in flight at once, neither update could leave the barrier.
            await asyncio.gather(turns(subs[0], 1), turns(subs[1], 1))
            started.clear()
            await asyncio.gather(*(turns(s, 3) for s in subs[2:]))
            seen = []
            for s in subs:
                context = await s.scene_context()
                seen.append([t.messages[0].content for t in context.topics])
            return [s.agent_id for s in subs], seen

    ids, seen = asyncio.run(main())
    for i, (agent_id, lines) in enumerate(zip(ids, seen, strict=True)):
        n = 1 if i < 2 else 3
        assert lines == [f"from {agent_id}-{t}" for t in range(n)]  # its own turns, and only
    assert started[:6] == ids[2:]  # every domain's first turn began before any second one
    assert len(started) == 18


def test_the_loop_keeps_running_while_update_waits_on_a_slow_model(tmp_path: Path) -> None:
    """The fake model answers only after the loop's heartbeat has ticked: no tick, no answer."""
    server = FakeOpenAI().start()
    ticked = threading.Event()
    waited: list[bool] = []
    server.script(Step(on_request=lambda: waited.append(ticked.wait(30))))
    llm = memhop.LlmConfig(api_url=server.api_url, api_key="sk-test", model="fake", timeout_secs=60)

    async def main() -> tuple[int, int]:
        ticks = 0
        in_flight = asyncio.Event()

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                if in_flight.is_set():
                    ticks += 1
                    if ticks >= 5:
                        ticked.set()

        async with await _open(tmp_path / "slow.meh", llm) as db:
            me = await db.primary()
            await me.search()
            beat = asyncio.create_task(heartbeat())
            in_flight.set()
            closed = await me.update(input="hello", output="hi", created_at=TS)
            beat.cancel()
            context = await me.scene_context()
        return ticks, len([t for t in context.topics if t.topic_id == closed.id])

    try:
        ticks, stored = asyncio.run(main())
    finally:
        server.stop()
    assert waited == [True], "the model was answered without the heartbeat ticking"
    assert ticks >= 5
    assert stored == 1
    assert server.count("keywords") == 1


def test_cancelling_a_task_never_leaves_half_a_call(tmp_path: Path) -> None:
    """A running update completes whole; a queued call that was cancelled never runs."""
    server = FakeOpenAI().start()
    entered, release = threading.Event(), threading.Event()
    server.script(Step(on_request=lambda: (entered.set(), release.wait(30))))
    llm = memhop.LlmConfig(api_url=server.api_url, api_key="sk-test", model="fake", timeout_secs=60)
    path = tmp_path / "cancel.meh"

    async def main() -> str:
        db = await _open(path, llm, workers=1)
        me = await db.primary()
        dropped = await db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="dropped"))
        kept = await db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="kept"))
        await me.search()
        update = asyncio.create_task(me.update(input="whole", output="turn", created_at=TS))
        while not entered.is_set():  # the update is inside the model, holding the one worker
            await asyncio.sleep(0.005)
        queued = asyncio.create_task(dropped.search())
        control = asyncio.create_task(kept.search())
        await asyncio.sleep(0)
        update.cancel()
        queued.cancel()
        release.set()
        for task in (update, queued):
            with pytest.raises(asyncio.CancelledError):
                await task
        await control
        await db.close()  # waits for the running update
        return dropped.agent_id

    try:
        dropped_id = asyncio.run(main())
    finally:
        server.stop()
    with memhop.open(str(path), memhop.LocalModel()) as again:
        topics = again.primary().scene_context().topics
        assert [m.content for m in topics[0].messages] == ["whole", "turn"]
        names = {a.name: a.id for a in again.agents()}
        assert again.agent(memhop.LocalModel(), names["kept"]).list_scenes()  # the control ran
        assert again.agent(memhop.LocalModel(), dropped_id).list_scenes() == []


def test_workers_and_closing(tmp_path: Path) -> None:
    """A bad pool size is a ConfigError before the path is touched; calls after close refuse."""

    async def main() -> None:
        for bad in (0, -1, 1.5, True, "4"):
            with pytest.raises(memhop.ConfigError, match="workers"):
                await _open(tmp_path / "bad.meh", workers=bad)
        assert not (tmp_path / "bad.meh").exists()
        db = await _open(tmp_path / "ok.meh", workers=1)
        me = await db.primary()
        assert (await me.search()).new_topic_id
        assert "AsyncSession" in repr(me)
        await db.close()
        assert db.closed
        with pytest.raises(memhop.ClosedError):
            await me.search()
        with pytest.raises(memhop.ClosedError):
            await db.close()
        assert me.agent_id == "0" * 16

    asyncio.run(main())


@pytest.fixture
def no_aio_threads() -> Iterator[None]:
    yield
    assert not [t for t in threading.enumerate() if t.name.startswith("memhop-aio")]


def test_dispatch_runs_a_tool_call_on_the_pool(tmp_path: Path, no_aio_threads: None) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        async with memhop.aio.open(
            str(tmp_path / "d.meh"), memhop.LocalModel(), profile=memhop.ProfileInput(name="p")
        ) as db:
            me = await db.primary()
            opened = await me.dispatch("memory_search", "{}")
            refused = await me.dispatch("memory_close_turn", {"created_at": 1})
            return opened, refused

    opened, refused = asyncio.run(main())
    assert opened["new_topic_id"]
    assert refused["error"]["code"] == 1003


class GatedDreamModel:
    """Consolidation waits until its ``cancel`` is set (or 30 s); counts the distill calls."""

    def __init__(self) -> None:
        self._local = memhop.LocalModel()
        self.entered = threading.Event()
        self.saw_cancel: list[bool] = []
        self.distilled = 0

    def extract_keywords(self, text: str, *, cancel: threading.Event | None = None) -> Any:
        return self._local.extract_keywords(text, cancel=cancel)

    def consolidate(self, topics: Any, floor: int, *, cancel: threading.Event | None = None) -> Any:
        self.entered.set()
        assert cancel is not None
        self.saw_cancel.append(cancel.wait(30))
        return self._local.consolidate(topics, floor, cancel=cancel)

    def distill(self, samples: Any, *, cancel: threading.Event | None = None) -> Any:
        self.distilled += 1
        return self._local.distill(samples, cancel=cancel)


def test_cancelling_a_dream_task_stops_the_pass(tmp_path: Path) -> None:
    """The pass sees its cancel set and stops before distilling; a turn closed before stays."""
    model = GatedDreamModel()
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1, dream_compress_min_topics=-1)
    path = tmp_path / "dream.meh"

    async def main() -> None:
        profile = memhop.ProfileInput(name="p")
        async with memhop.aio.open(str(path), model, defaults, profile) as db:
            me = await db.primary()
            for i in range(4):
                await me.search()
                await me.update(input=f"question {i} on coffee", output="ok", created_at=TS + i)
            task = asyncio.create_task(me.dream())
            while not model.entered.is_set():
                await asyncio.sleep(0.005)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert model.saw_cancel == [True]  # the pass's own event was set by the task's cancel
    assert model.distilled == 0  # stopped before its last stage
    with memhop.open(str(path), memhop.LocalModel()) as db:
        assert len(db.primary().scene_context().topics) == 4  # the control: turns are whole


def test_a_cancelled_open_leaves_the_file_free(tmp_path: Path) -> None:
    """An open whose task is cancelled closes what it opened: the file is not left locked."""
    path = tmp_path / "cancelled.meh"

    async def main() -> None:
        task = asyncio.create_task(_open(path))
        await asyncio.sleep(0)  # the open is now submitted to its pool
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    for thread in threading.enumerate():
        if thread.name.startswith("memhop-aio"):
            thread.join(30)  # the abandoned pool finishes closing, then its threads end
    assert not [t for t in threading.enumerate() if t.name.startswith("memhop-aio")]
    profile = memhop.ProfileInput(name="primary")
    with memhop.open(str(path), memhop.LocalModel(), profile=profile) as db:
        assert db.primary().get_l0().name == "primary"


def test_async_with_on_the_sync_db_points_at_memhop_aio_and_leaves_the_file_free(
    tmp_path: Path,
) -> None:
    """``memhop.open`` is synchronous: ``async with`` on it is refused and closes what it opened."""
    path = tmp_path / "sync.meh"
    profile = memhop.ProfileInput(name="primary")
    entered: list[object] = []

    async def misuse() -> None:
        async with memhop.open(str(path), memhop.LocalModel(), profile=profile) as db:
            entered.append(db)

    with pytest.raises(TypeError, match=r"async with memhop\.aio\.open\(\.\.\.\)") as refused:
        asyncio.run(misuse())
    assert str(path) in str(refused.value)
    assert entered == []
    # The file is free: the open in the refused statement was closed, not left locked.
    with memhop.open(str(path), memhop.LocalModel()) as db:
        assert db.primary().get_l0().name == "primary"

    async def proper() -> str:  # the control: the asyncio face takes the same arguments
        async with memhop.aio.open(str(path), memhop.LocalModel(), profile=profile) as db:
            return (await (await db.primary()).get_l0()).name

    assert asyncio.run(proper()) == "primary"
