"""Domain contexts: idle reclaim, parallel domains, usage metering (white-box, via the root)."""

from __future__ import annotations

import threading

import pytest

from memhop.config import Defaults, ProfileInput
from memhop.errors import InvalidQueryError
from memhop.llm import LocalModel
from memhop.records import TopicSlot
from memhop.root import Root, content, open_root, reads, turn
from memhop.root.content import ContentInput
from memhop.root.ops import AgentOps as _Ops
from memhop.root.reads import SceneView

T0 = 1_700_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


class AgentOps(_Ops):
    """The turn-loop calls of one domain, spelled out for these tests."""

    def search(self, scene_id: int, l3_id: int, new_scene: bool) -> turn.Opened:
        return self.run(turn.search, self.now(), scene_id, l3_id, new_scene)

    def update(self, user: str, agent: str, outcome: str, at: int) -> TopicSlot:
        return self.run(turn.update, user, agent, outcome, at)

    def append_archive(self, item: ContentInput) -> int:
        return self.run(content.append_archive, item)

    def scene_context(self, scene_id: int) -> SceneView:
        return self.run(reads.scene_context, scene_id)


def _root(path: str, clock: Clock, ttl: int = 1_000) -> Root:
    return open_root(
        path,
        LocalModel(),
        Defaults(agent_idle_ttl_ms=ttl),
        ProfileInput(name="primary"),
        clock=clock,
    )


def test_an_idle_sub_agent_loses_its_open_turn_but_not_its_records(meh_path: str) -> None:
    """Past the TTL a domain is reclaimed: its round is refused, its stored turns remain."""
    clock = Clock()
    root = _root(meh_path, clock)
    try:
        worker = AgentOps(root, root.sub_agent(LocalModel(), ProfileInput(name="worker")))
        primary = AgentOps(root, 0)
        worker.search(0, 0, False)
        worker.update("the kettle is broken", "I will order a new kettle", "", T0)
        worker.search(0, 0, False)  # a second round, left open
        assert worker.append_archive(ContentInput("early", T0 + 1)) == 3  # the round is open
        clock.now += 5_000
        primary.search(0, 0, False)  # any lookup sweeps idle domains
        with pytest.raises(InvalidQueryError, match="no turn is open"):
            worker.append_archive(ContentInput("late", T0 + 1))
        listed = worker.scene_context(0).rows
        assert len(listed) == 1  # the closed turn's row survived the reclaim
        assert listed[0].row.topic.fused_keywords
    finally:
        root.close()


def test_within_the_ttl_the_open_turn_survives(meh_path: str) -> None:
    """The positive control: the same sequence inside the TTL keeps the round open."""
    clock = Clock()
    root = _root(meh_path, clock)
    try:
        worker = AgentOps(root, root.sub_agent(LocalModel(), ProfileInput(name="worker")))
        worker.search(0, 0, False)
        clock.now += 500
        AgentOps(root, 0).search(0, 0, False)
        assert worker.append_archive(ContentInput("still open", T0 + 1)) == 3
    finally:
        root.close()


def test_the_primary_is_never_reclaimed(meh_path: str) -> None:
    """The primary keeps its open turn however long it idles."""
    clock = Clock()
    root = _root(meh_path, clock)
    try:
        primary = AgentOps(root, 0)
        worker = AgentOps(root, root.sub_agent(LocalModel(), ProfileInput(name="w")))
        primary.search(0, 0, False)
        clock.now += 10_000_000
        worker.search(0, 0, False)
        assert primary.append_archive(ContentInput("kept", T0 + 1)) == 3
    finally:
        root.close()


class BlockingModel(LocalModel):
    """Blocks keyword extraction until released, to hold one domain's lock."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def extract_keywords(
        self, text: str, *, cancel: threading.Event | None = None
    ) -> tuple[str, ...]:
        self.entered.set()
        assert self.release.wait(10), "the test never released the model"
        return super().extract_keywords(text, cancel=cancel)


def test_a_slow_model_in_one_domain_does_not_block_another(meh_path: str) -> None:
    """While the primary waits on its model, a sub-agent completes a whole turn."""
    clock = Clock()
    blocking = BlockingModel()
    root = open_root(meh_path, blocking, Defaults(), ProfileInput(name="p"), clock=clock)
    try:
        primary = AgentOps(root, 0)
        worker = AgentOps(root, root.sub_agent(LocalModel(), ProfileInput(name="w")))
        primary.search(0, 0, False)
        closing = threading.Thread(
            target=primary.update, args=("slow question", "slow answer", "", T0), name="closer"
        )
        closing.start()
        assert blocking.entered.wait(10)
        worker.search(0, 0, False)
        row = worker.update("quick question", "quick answer", "", T0)
        assert row.fused_keywords
        assert closing.is_alive()  # the primary is still inside its model call
        blocking.release.set()
        closing.join(10)
        assert not closing.is_alive()
    finally:
        blocking.release.set()
        root.close()


def test_usage_is_metered_per_domain(meh_path: str) -> None:
    """Each domain's calls count against that domain only."""
    root = _root(meh_path, Clock(), ttl=0)
    try:
        worker_id = root.sub_agent(LocalModel(), ProfileInput(name="w"))
        worker = AgentOps(root, worker_id)
        worker.search(0, 0, False)
        worker.update("one", "two", "", T0)
        _, _, usage = root.stats()
        assert usage[worker_id].operations == 1
        assert usage[0].operations == 0
    finally:
        root.close()


def test_a_turn_close_makes_one_fsync_and_a_failed_one_keeps_its_lines(meh_path: str) -> None:
    """update syncs once; when the model fails the lines are durable and the turn stays open."""
    from unittest import mock

    from memhop.engine import storefile
    from memhop.errors import LLMError

    class Failing(LocalModel):
        fail = True

        def extract_keywords(
            self, text: str, *, cancel: threading.Event | None = None
        ) -> tuple[str, ...]:
            if self.fail:
                raise LLMError("endpoint down")
            return super().extract_keywords(text, cancel=cancel)

    model = Failing()
    root = open_root(meh_path, model, Defaults(), ProfileInput(name="p"), clock=Clock())
    try:
        primary = AgentOps(root, 0)
        primary.search(0, 0, False)
        counter = mock.MagicMock(side_effect=storefile.fsync_file)
        with mock.patch.object(storefile, "fsync_file", counter):
            with pytest.raises(LLMError, match="distill turn"):
                primary.update("question", "answer", "", T0)
            assert counter.call_count == 1  # the lines were synced despite the failure
            model.fail = False
            row = primary.update("question", "answer", "", T0)  # the turn is still open
            assert counter.call_count == 2  # one fsync for the whole successful close
        assert row.fused_keywords
    finally:
        root.close()


def test_a_host_model_without_usage_is_accepted_and_metered(meh_path: str) -> None:
    """usage() is optional: calls and failures are still counted, tokens read as zero."""

    class Plain:
        def extract_keywords(
            self, text: str, *, cancel: threading.Event | None = None
        ) -> tuple[str, ...]:
            return ("plain",)

        def consolidate(self, topics: object, floor: int, *, cancel: object = None) -> tuple[()]:
            return ()

        def distill(self, samples: object, *, cancel: object = None) -> object:
            raise AssertionError("not called here")

    root = open_root(meh_path, Plain(), Defaults(), ProfileInput(name="p"), clock=Clock())
    try:
        primary = AgentOps(root, 0)
        primary.search(0, 0, False)
        assert primary.update("hi", "hello", "", T0).fused_keywords == ("plain",)
        _, _, usage = root.stats()
        assert (usage[0].operations, usage[0].prompt_tokens, usage[0].failures) == (1, 0, 0)
    finally:
        root.close()
