"""Fixtures of the interface suite: the public ``memhop`` surface only, ids only as returned.

- ``mem`` runs a test twice: on the fresh handle and after a close and reopen. A test
  writes its state, calls ``mem.settle()`` and then reads; ``mem.session(agent_id)``
  re-reaches a domain by the id the library gave (the open turn lives only in memory, so
  settle before the reads, never between ``search`` and ``update``).
- ``FakeModel`` implements the ``memhop.Model`` protocol, counts calls per operation, and
  can be told to refuse (raise ``memhop.LLMError``) or to answer no keywords, so a test can
  tell "asked, then refused" (count 1) from "never asked" (count 0).
- ``assert_scoped`` is the one-line negative-with-control check; ``refused`` pins a refusal's
  class, code and message fragment and that the file did not change.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

import memhop

TS = 1_700_000_000_000
"""A fixed turn stamp in milliseconds; tests add small offsets (``TS + i``)."""

PRIMARY_NAME = "test-primary"
HEX16 = re.compile(r"[0-9a-f]{16}")


NO_CADENCE = memhop.Defaults(settled_scene_floor=-1)
"""The library's defaults but the passes ``search`` starts when a scene is left or the domain
comes back from an idle spell: they run on a thread of their own and would write beside what
a test reads. Tests of that cadence (test_cadence.py) ask for it."""


def open_new(path: str, llm: Any = None, **kwargs: Any) -> memhop.DB:
    """Create (or open) ``path`` with the fixture's primary profile (``NO_CADENCE`` unless
    the test names its own defaults)."""
    kwargs.setdefault("defaults", NO_CADENCE)
    return memhop.open(
        path,
        memhop.LocalModel() if llm is None else llm,
        profile=memhop.ProfileInput(name=PRIMARY_NAME, role="offline fixture"),
        **kwargs,
    )


class FakeModel:
    """An in-process ``memhop.Model``: counts calls per operation, refuses on demand."""

    def __init__(self, keywords: Sequence[str] = ("重构", "代码", "测试")) -> None:
        self._inner = memhop.LocalModel()
        self._lock = threading.Lock()
        self.keywords = tuple(keywords)
        self.calls: Counter[str] = Counter()
        self.texts: list[str] = []
        self.refuse: set[str] = set()
        self.empty_keywords = False

    def _count(self, op: str) -> None:
        with self._lock:
            self.calls[op] += 1
        if op in self.refuse:
            raise memhop.LLMError(f"fake model refuses {op}")

    def extract_keywords(self, text: str, *, cancel: threading.Event | None = None) -> Any:
        with self._lock:
            self.texts.append(text)
        self._count("keywords")
        return () if self.empty_keywords else self.keywords

    def consolidate(self, topics: Any, floor: int, *, cancel: threading.Event | None = None) -> Any:
        self._count("consolidate")
        return self._inner.consolidate(topics, floor, cancel=cancel)

    def distill(self, samples: Any, *, cancel: threading.Event | None = None) -> Any:
        self._count("distill")
        return self._inner.distill(samples, cancel=cancel)

    def usage(self) -> Any:
        return self._inner.usage()  # tokens are 0; the library counts calls itself


class Mem:
    """One test's file: the open DB and, for the "reopened" pass, a close and reopen."""

    def __init__(self, path: str, *, reopen: bool, model: Any) -> None:
        self.path = path
        self.reopens = reopen
        self.model = model
        self.db = open_new(path, model)

    def settle(self) -> memhop.DB:
        """End the write phase: on the "reopened" pass close and open the file again."""
        if self.reopens:
            self.db.close()
            self.db = memhop.open(self.path, memhop.LocalModel(), NO_CADENCE)
        return self.db

    def session(self, agent_id: str) -> memhop.Session:
        """Reach a domain by the id the library gave (after ``settle`` too)."""
        return self.db.agent(memhop.LocalModel(), agent_id)

    def primary(self) -> memhop.Session:
        return self.db.primary()

    def sub(self, name: str) -> memhop.Session:
        return self.db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name=name))

    def close(self) -> None:
        if not self.db.closed:
            self.db.close()


@pytest.fixture(params=["fresh", "reopened"])
def mem(request: pytest.FixtureRequest, meh_path: str) -> Iterator[Mem]:
    """The primary talks to ``memhop.LocalModel()``."""
    m = Mem(meh_path, reopen=request.param == "reopened", model=memhop.LocalModel())
    try:
        yield m
    finally:
        m.close()


@pytest.fixture(params=["fresh", "reopened"])
def fake_mem(request: pytest.FixtureRequest, meh_path: str) -> Iterator[Mem]:
    """The primary talks to a ``FakeModel`` (``mem.model``) whose calls are counted."""
    m = Mem(meh_path, reopen=request.param == "reopened", model=FakeModel())
    try:
        yield m
    finally:
        m.close()


@pytest.fixture
def db(meh_path: str) -> Iterator[memhop.DB]:
    """A single fresh handle (for tests where a reopen changes what is tested)."""
    handle = open_new(meh_path)
    try:
        yield handle
    finally:
        if not handle.closed:
            handle.close()


def assert_scoped(negative: Sequence[Any], control: Sequence[Any], what: str) -> None:
    """The negative read is empty while the same read elsewhere is not: scoping, not a dud."""
    assert len(control) > 0, f"control for {what!r} is empty: the negative proves nothing"
    assert len(negative) == 0, f"{what}: expected nothing, got {list(negative)!r}"


def footprint(db: memhop.DB) -> tuple[int, int]:
    stats = db.stats()
    return stats.file_bytes, stats.record_count


@contextmanager
def refused(
    db: memhop.DB,
    cls: type[memhop.MemHopError],
    code: int | None,
    fragment: str = "",
) -> Iterator[list[BaseException]]:
    """The block raises ``cls`` (with ``code``, None = any, and ``fragment``); file unchanged."""
    before = footprint(db)
    caught: list[BaseException] = []
    with pytest.raises(cls) as info:
        yield caught
    caught.append(info.value)
    if code is not None:
        assert memhop.code_of(info.value) == code, f"code {memhop.code_of(info.value)} != {code}"
        assert info.value.code == code
    assert fragment in str(info.value), f"{fragment!r} not in {str(info.value)!r}"
    assert footprint(db) == before, "a refused call wrote to the file"


def assert_grows(db: memhop.DB, call: Callable[[], Any]) -> Any:
    """Positive control: an accepted call grows the file and its record count."""
    bytes_before, records_before = footprint(db)
    result = call()
    bytes_after, records_after = footprint(db)
    assert bytes_after > bytes_before
    assert records_after > records_before
    return result


def assert_id(value: str) -> None:
    assert HEX16.fullmatch(value), value
    assert value != "0" * 16


def turn(
    session: memhop.Session,
    i: int = 0,
    *,
    input: str = "",
    output: str = "",
    outcome: str = "",
    **search: Any,
) -> tuple[memhop.SearchResult, memhop.TopicSlot]:
    """One whole turn: search, then close with the given lines (defaults name the turn)."""
    opened = session.search(**search)
    if not (input or output or outcome):
        input, output = f"question {i} about retries", f"answer {i} about retries"
    closed = session.update(input=input, output=output, outcome=outcome, created_at=TS + i)
    assert closed.id == opened.new_topic_id
    return opened, closed
