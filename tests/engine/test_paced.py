"""Engine.paced: a long read calls its thread's pacer between parts, without the lock.

A domain's build reads every record on a thread of its own while turns go on;
each of a turn's writes may wait out one lock hold, and each C call of the
build holds the interpreter. So a paced read lets go of both between parts:
another thread can write in the pause, and what it writes is read right.
"""

from __future__ import annotations

import threading

import pytest

import memhop.engine.reads as engine_reads
from memhop.engine import create_engine, open_engine
from memhop.intmap import pages as intmap

AGENT = 0x5
TYPE = 0x08
ELSE = 0x04
RECORDS = 40


def _seeded(path: str) -> None:
    """RECORDS records of TYPE (ids 1..RECORDS), closed so the reopen knows no type yet."""
    engine = create_engine(path)
    try:
        for i in range(1, RECORDS + 1):
            engine.write(AGENT, TYPE, i, b"payload %d" % i)
    finally:
        engine.close()


def _other_thread(run: object) -> None:
    """Run ``run`` on another thread; fail if it does not finish (the lock was held)."""
    worker = threading.Thread(target=run)  # type: ignore[arg-type]
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "another thread could not take the engine lock in a pause"


def test_a_paced_read_pauses_between_parts_without_the_lock(
    meh_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control: the same read unpaced gives the same records and never pauses."""
    monkeypatch.setattr(engine_reads, "_READ_CHUNK", 8)
    _seeded(meh_path)
    engine = open_engine(meh_path)
    try:
        unpaced = list(engine.payloads_of_type(AGENT, TYPE))
        assert len(unpaced) == RECORDS
        pauses: list[bool] = []

        def pause() -> None:
            seen: list[bool] = []
            _other_thread(lambda: seen.append(engine.contains(AGENT, 1)))
            pauses.append(seen == [True])

        with engine.paced(pause):
            paced = list(engine.payloads_of_type(AGENT, TYPE))
        assert paced == unpaced
        assert pauses == [True] * (RECORDS // 8 - 1)  # between the five parts
        list(engine.payloads_of_type(AGENT, TYPE))  # outside ``paced``: no pause
        assert len(pauses) == RECORDS // 8 - 1
    finally:
        engine.close()


def test_a_write_in_a_pause_of_the_first_typed_question_is_taken_in(
    meh_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The type bytes are read a few pages a hold of the lock, pacing between holds; a record
    rewritten as another type during a pause is answered under its new type, and the new
    record too.

    Control: the ids never touched keep their type, and the question asked again
    (now from the kept types) answers the same.
    """
    monkeypatch.setattr(intmap, "_PAGE_FILL", 8)  # the snapshot's entries in pages of 8
    monkeypatch.setattr(intmap, "_PAGE_MAX", 16)
    monkeypatch.setattr(engine_reads, "TYPE_STEP", 8)  # a page a hold
    _seeded(meh_path)
    engine = open_engine(meh_path)
    try:
        written: list[int] = []

        def pause() -> None:
            if not written:  # once, while the read is out
                _other_thread(lambda: written.extend([
                    engine.write(AGENT, ELSE, 3, b"now another type"),
                    engine.write(AGENT, ELSE, RECORDS + 1, b"a new record"),
                ]))  # fmt: skip

        with engine.paced(pause):
            typed = engine.ids_of_type(AGENT, TYPE)
        assert len(written) == 2
        assert typed == [i for i in range(1, RECORDS + 1) if i != 3]
        assert engine.ids_of_type(AGENT, ELSE) == [3, RECORDS + 1]
        assert engine.ids_of_type(AGENT, TYPE) == typed
    finally:
        engine.close()


def test_an_unpaced_first_typed_question_lets_go_between_its_steps(
    meh_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a pace installed, the tags are still read a step a hold, the interpreter
    offered to a waiting writer between steps (``time.sleep(0)``); the answer is whole.

    Control: asked again, the tags are known and no step is taken.
    """
    monkeypatch.setattr(intmap, "_PAGE_FILL", 8)  # 40 records: five pages of 8
    monkeypatch.setattr(intmap, "_PAGE_MAX", 16)
    monkeypatch.setattr(engine_reads, "TYPE_STEP", 8)  # a page a hold
    _seeded(meh_path)
    engine = open_engine(meh_path)
    yields: list[float] = []
    monkeypatch.setattr(engine_reads.time, "sleep", yields.append)
    try:
        assert engine.ids_of_type(AGENT, TYPE) == list(range(1, RECORDS + 1))
        assert yields == [0] * (RECORDS // 8 - 1)  # a hold a page, a yield between two
        engine.ids_of_type(AGENT, TYPE)
        assert len(yields) == RECORDS // 8 - 1  # typed now: one hold, no yield
    finally:
        engine.close()
