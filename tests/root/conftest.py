"""Fixtures of the root's tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from memhop.domain.mirrors import Mirrors
from memhop.root.root import Root

WAIT = 20.0  # seconds; only a hang comes near it


@pytest.fixture
def held_builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Every full build of a domain waits until the event is set (set at first: a test
    clears it to hold the builds that follow)."""
    gate = threading.Event()
    build = Root._build_mirrors

    def gated(root: Root, agent_id: int) -> Mirrors:
        assert gate.wait(WAIT), "the test never let the build go"
        return build(root, agent_id)

    monkeypatch.setattr(Root, "_build_mirrors", gated)
    gate.set()
    yield gate
    gate.set()
