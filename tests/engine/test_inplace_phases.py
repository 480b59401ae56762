"""Compaction in place beside writes: what is written during each phase, and what phase 3 costs.

The hooks of ``compact_in_place`` run writes where a concurrent caller's
would land: ``pace`` between chunks of phases 1 and 2 (no lock held), and
``hold`` just before phase 3 takes the engine lock. Each test builds its file
with the engine and checks the compacted file's bytes as well as its reads:
the log itself (a replay of it, as an open without a snapshot does) must
give the same records, and no payload deleted or superseded before the swap
may be left in it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memhop.engine import (
    RECORD_HEADER_SIZE,
    Engine,
    RecordEntry,
    catchup,
    create_engine,
    open_engine,
    publish,
)
from memhop.engine.header import DATA_START
from memhop.engine.inplace import Hooks, compact_in_place
from memhop.engine.recovery import frames_between, scan_records
from memhop.engine.side_files import TEMP_SUFFIX
from memhop.errors import InvalidQueryError, StorageIOError

RECORDS = 3000  # several phase 1 chunks (catchup.CHUNK_FRAMES frames each)
A, B = 1, 2  # two domains


def _payload(i: int, tag: bytes = b"v1") -> bytes:
    return b"record-%05d-%s-" % (i, tag) + b"x" * 200


def _build(path: str) -> Engine:
    """RECORDS records over two domains; record 5 of A deleted and 6 of A superseded before."""
    engine = create_engine(path)
    engine.write_batch(
        [RecordEntry(A if i % 2 else B, 0x08, i, _payload(i)) for i in range(RECORDS)]
    )
    engine.delete(A, 5)
    engine.write(A, 0x08, 7, _payload(7, b"v2"))
    engine.checkpoint()
    return engine


def _temps(folder: Path) -> list[str]:
    return [n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX)]


def _records(engine: Engine) -> dict[tuple[int, int], bytes]:
    return {(a, i): engine.read(a, i).payload for a in engine.agents() for i in engine.all_ids(a)}


def _log_index(path: str, end: int) -> dict[int, dict[int, int]]:
    """The index a replay of the log up to ``end`` gives (what an open without a snapshot
    takes)."""
    data = Path(path).read_bytes()
    replayed: dict = {}
    scan = scan_records(data, DATA_START, end, replayed, 0)
    assert scan.skipped == 0
    return {agent: dict(ids.items()) for agent, ids in replayed.items() if ids}


def _once(action: Callable[[], None]) -> Callable[[], None]:
    """A pacer that runs ``action`` on its first call only."""
    done: list[bool] = []

    def pace() -> None:
        if not done:
            done.append(True)
            action()

    return pace


def test_writes_supersedes_and_deletes_during_each_phase_survive_and_dead_payloads_go(
    tmp_path: Path,
) -> None:
    """During phase 1 (after its first chunk), phase 2 and just before phase 3's lock: new
    records, new versions and deletes, of records copied already and not yet copied. The
    compacted file reads as the source did, its log alone replays to the same index, and no
    payload deleted or superseded before the swap is in its bytes (the positive control:
    the copy held record 2's first version until phase 2 replaced it)."""
    path = str(tmp_path / "db.meh")
    engine = _build(path)
    gone = [_payload(5), _payload(7)]  # deleted or superseded before the compaction
    assert all(p in Path(path).read_bytes() for p in gone)
    in_copy: list[bytes] = []

    def during_phase_1() -> None:  # records 1 to 4 are in the first chunk: copied already
        engine.write(A, 0x08, 1, _payload(1, b"v2"))
        engine.delete(A, 3)
        engine.write(A, 0x08, RECORDS - 1, _payload(RECORDS - 1, b"v2"))  # not copied yet
        engine.delete(B, RECORDS - 2)  # not copied yet
        engine.write(A, 0x08, 50_001, _payload(50_001))

    def during_phase_2() -> None:  # after the copy's checkpoint
        in_copy.append((tmp_path / _temps(tmp_path)[0]).read_bytes())
        engine.write(B, 0x08, 2, _payload(2, b"v2"))
        engine.delete(B, 4)
        engine.write(B, 0x08, 50_002, _payload(50_002))

    @contextlib.contextmanager
    def hold() -> Iterator[None]:  # after phase 2, before phase 3 takes the engine lock
        engine.write(A, 0x08, 9, _payload(9, b"v2"))
        engine.delete(B, 10)
        engine.write(B, 0x08, 50_003, _payload(50_003))
        yield

    real_settle = catchup.Copy.settle

    def settle(copy: catchup.Copy) -> None:
        copy.pace = _once(during_phase_2)
        real_settle(copy)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(catchup.Copy, "settle", settle)
        fresh = compact_in_place(engine, path, Hooks(pace=_once(during_phase_1), hold=hold))
    assert fresh is not None
    assert engine.closed
    expected = {(A if i % 2 else B, i): _payload(i) for i in range(RECORDS)}
    for key in [(A, 5), (A, 3), (B, RECORDS - 2), (B, 4), (B, 10)]:
        del expected[key]
    for agent, i in [(A, 7), (A, 1), (A, RECORDS - 1), (B, 2), (A, 9)]:
        expected[(agent, i)] = _payload(i, b"v2")
    for agent, i in [(A, 50_001), (B, 50_002), (B, 50_003)]:
        expected[(agent, i)] = _payload(i)
    try:
        assert _records(fresh) == expected
        index = {
            a: dict(zip(fresh.all_ids(a), fresh.offsets_of(a, fresh.all_ids(a)), strict=True))
            for a in fresh.agents()
        }
        end = fresh.record_end
    finally:
        fresh.close_without_checkpoint()
    after = Path(path).read_bytes()
    assert _log_index(path, end) == index  # the log alone gives the same records
    assert len(list(frames_between(after, DATA_START, end))) > len(expected)  # all read
    dead = [_payload(i) for i in (1, 2, 3, 4, 9, 10, RECORDS - 1, RECORDS - 2)]
    assert [p for p in [*gone, *dead] if p in after] == []
    assert _payload(2) in in_copy[0]  # control: copied in phase 1, erased once superseded
    assert [p for p in gone if p in in_copy[0]] == []  # deleted before: never copied
    assert _temps(tmp_path) == []


def test_phase_3_replays_only_what_was_written_after_phase_2(tmp_path: Path) -> None:
    """The hold's catch-up covers the frames written after phase 2, not the file: none when
    nothing was written meanwhile, and exactly the bytes of three writes made in the hold."""
    replayed: list[tuple[bool, int]] = []
    real = catchup.Copy.catch_up

    def catch_up(copy: catchup.Copy, *, drained: bool = False) -> int:
        done = real(copy, drained=drained)
        replayed.append((drained, done))
        return done

    written: list[int] = []
    for writes in (False, True):
        path = str(tmp_path / f"db-{writes}.meh")
        engine = _build(path)

        @contextlib.contextmanager
        def hold(engine: Engine = engine, writes: bool = writes) -> Iterator[None]:
            start = engine.record_end
            if writes:
                engine.write(A, 0x08, 9, _payload(9, b"v2"))
                engine.delete(B, 10)
                engine.write(B, 0x08, 50_003, _payload(50_003))
            written.append(engine.record_end - start)
            yield

        replayed.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(catchup.Copy, "catch_up", catch_up)
            fresh = compact_in_place(engine, path, Hooks(hold=hold))
        assert fresh is not None
        held = [n for drained, n in replayed if drained]
        assert held == [written[-1]]
        if writes:
            assert fresh.read(B, 50_003).payload == _payload(50_003)
        fresh.close()
    assert written[0] == 0
    assert written[1] > 3 * RECORD_HEADER_SIZE  # control: the hold did replay frames


def test_erase_zeroes_a_dead_frame_under_a_fresh_crc_and_refuses_a_live_one(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "db.meh")
    engine = create_engine(path)
    try:
        first = engine.write(A, 0x08, 1, b"secret-one")
        engine.write(A, 0x08, 1, b"kept-version")  # the first frame is dead now
        dead_stone = engine.write(A, 0x08, 2, b"gone-too")
        engine.delete(A, 2)
        access = engine.online()
        with pytest.raises(InvalidQueryError, match="live or a tombstone"):
            access.erase([engine.offset_of(A, 1) or 0])  # the live version
        tombstone = engine.record_end - RECORD_HEADER_SIZE
        with pytest.raises(InvalidQueryError, match="live or a tombstone"):
            access.erase([tombstone])
        access.erase([first, dead_stone])
        engine.sync()
        data = Path(path).read_bytes()
        assert b"secret-one" not in data
        assert b"gone-too" not in data
        assert b"kept-version" in data  # control: the live frame is untouched
        frames = list(frames_between(data, DATA_START, engine.record_end))  # every CRC holds
        assert [(f[0], f[4]) for f in frames][:2] == [
            (first, 1),
            (first + RECORD_HEADER_SIZE + 10, 1),
        ]
        assert data[first + RECORD_HEADER_SIZE : first + RECORD_HEADER_SIZE + 10] == bytes(10)
        assert engine.read(A, 1).payload == b"kept-version"
    finally:
        engine.close()
    again = open_engine(path)
    try:
        assert _records(again) == {(A, 1): b"kept-version"}
    finally:
        again.close()


@pytest.mark.parametrize("where", ["rename", "hold"])
def test_a_failure_in_phase_3_leaves_the_old_engine_open_and_in_use(
    tmp_path: Path, where: str
) -> None:
    """The rename fails, or the hold refuses (as the root's moved-file check does): the
    error is raised, the old engine still serves what was written during the copy and takes
    writes, no temporary file is left, and the next compaction runs."""
    path = str(tmp_path / "db.meh")
    engine = _build(path)
    before = _records(engine)
    inode = os.stat(path).st_ino

    def during() -> None:
        engine.write(A, 0x08, 50_001, _payload(50_001))

    @contextlib.contextmanager
    def refusing() -> Iterator[None]:
        raise StorageIOError("compact: moved since it was opened (injected)")
        yield

    def failing_replace(src: str, dst: str) -> None:
        raise OSError("injected rename failure")

    hooks = Hooks(pace=_once(during), hold=refusing if where == "hold" else contextlib.nullcontext)
    with pytest.MonkeyPatch.context() as patch:
        if where == "rename":
            patch.setattr(publish.os, "replace", failing_replace)
        with pytest.raises(StorageIOError):
            compact_in_place(engine, path, hooks)
    assert not engine.closed
    assert _temps(tmp_path) == []
    assert engine.read(A, 50_001).payload == _payload(50_001)
    engine.write(B, 0x08, 50_002, _payload(50_002))
    assert _records(engine) == before | {
        (A, 50_001): _payload(50_001),
        (B, 50_002): _payload(50_002),
    }
    assert os.stat(path).st_ino == inode  # the name still holds the old file
    fresh = compact_in_place(engine, path)  # control: the same compaction, unhindered
    assert fresh is not None
    try:
        assert os.stat(path).st_ino != inode
        assert _records(fresh) == before | {
            (A, 50_001): _payload(50_001),
            (B, 50_002): _payload(50_002),
        }
    finally:
        fresh.close()


_KILLED_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from memhop.engine import catchup, online
    from memhop.engine.inplace import Hooks, compact_in_place
    from memhop.engine.lifecycle import open_engine

    where, path = sys.argv[1], sys.argv[2]
    engine = open_engine(path)

    def kill():
        os.kill(os.getpid(), signal.SIGKILL)

    def during():  # acknowledged (fsynced) before the kill: the old file must keep them
        engine.write(1, 0x08, 50_001, b"written during the copy")
        engine.write(1, 0x08, 1, b"record 1 superseded during the copy")
        engine.delete(2, 2)
        if where == "phase 1":
            kill()

    def after(real, when):
        def wrapper(*args, **kwargs):
            result = real(*args, **kwargs)
            if when(*args, **kwargs):
                kill()
            return result
        return wrapper

    if where == "phase 2":  # the replay of the writes made during the copy, in the copy
        catchup.Copy.catch_up = after(catchup.Copy.catch_up, lambda *a, drained=False: True)
    if where == "erase":  # their copied frames erased in the copy
        online.OnlineAccess.erase = after(online.OnlineAccess.erase, lambda *a: True)
    paced = []

    def pace():
        if not paced:
            paced.append(1)
            during()

    compact_in_place(engine, os.path.abspath(path), Hooks(pace=pace))
    print("finished")
    """
)


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("orig") / "db.meh"
    _build(str(path)).close()
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
@pytest.mark.parametrize("where", ["phase 1", "phase 2", "erase"])
def test_a_kill_during_phases_1_and_2_leaves_the_old_file_whole_with_every_write(
    original: Path, tmp_path: Path, where: str
) -> None:
    """A kill while the copy is made, after writes were acknowledged beside it: the name
    holds the old file, whole, with those writes; the killed build's temporary sibling is
    there, and the next writable open removes it."""
    path = tmp_path / "db.meh"
    path.write_bytes(original.read_bytes())
    done = subprocess.run(
        [sys.executable, "-c", _KILLED_CHILD, where, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    assert len(_temps(tmp_path)) == 1
    assert _payload(5) in path.read_bytes()  # the old file: a payload deleted before is there
    engine = open_engine(str(path))
    try:
        assert _temps(tmp_path) == []
        expected = {(A if i % 2 else B, i): _payload(i) for i in range(RECORDS)}
        del expected[(A, 5)], expected[(B, 2)]
        expected[(A, 7)] = _payload(7, b"v2")
        expected[(A, 1)] = b"record 1 superseded during the copy"
        expected[(A, 50_001)] = b"written during the copy"
        assert _records(engine) == expected
        fresh = compact_in_place(engine, str(path))  # control: a retry compacts
        assert fresh is not None
        assert _records(fresh) == expected
        fresh.close()
    finally:
        if not engine.closed:
            engine.close()
    assert _payload(5) not in path.read_bytes()


# (agent, id, write?) ops; payloads are numbered, so each write's bytes are its own
_op = st.tuples(st.sampled_from([A, B]), st.integers(0, 6) | st.integers(0, 1400), st.booleans())


@settings(max_examples=25, deadline=None)
@given(
    before=st.lists(_op, max_size=40),
    during=st.lists(st.tuples(st.integers(1, 8), _op), max_size=30),
    held=st.lists(_op, max_size=10),
)
def test_any_writes_beside_a_compaction_read_back_and_leave_no_dead_payload(
    tmp_path_factory: pytest.TempPathFactory,
    before: list[tuple[int, int, bool]],
    during: list[tuple[int, tuple[int, int, bool]]],
    held: list[tuple[int, int, bool]],
) -> None:
    """Writes and deletes before, at any pace of phases 1 and 2, and in the hold: the
    compacted file holds exactly the live records (its log replays to its index), and no
    payload that is not live any more is in its bytes."""
    path = str(tmp_path_factory.mktemp("any") / "db.meh")
    engine = create_engine(path)
    model: dict[tuple[int, int], bytes] = {}
    written: list[bytes] = []

    def apply(agent: int, ident: int, write: bool) -> None:
        if write:
            payload = b"<payload %06d>" % len(written) + b"y" * (ident % 300)
            written.append(payload)
            engine.write(agent, 0x08 + ident % 3, ident, payload)
            model[(agent, ident)] = payload
        else:
            engine.delete(agent, ident)
            model.pop((agent, ident), None)

    base = [(A if i % 2 else B, i, b"<base %06d>" % i) for i in range(1200)]
    engine.write_batch([RecordEntry(a, 0x08 + i % 3, i, p) for a, i, p in base])  # chunks
    model.update({(a, i): p for a, i, p in base})
    written.extend(p for _, _, p in base)
    for op in before:
        apply(*op)
    paces = [0]

    def pace() -> None:
        paces[0] += 1
        for at, op in during:
            if at == paces[0]:
                apply(*op)

    @contextlib.contextmanager
    def hold() -> Iterator[None]:
        for op in held:
            apply(*op)
        yield

    fresh = compact_in_place(engine, path, Hooks(pace=pace, hold=hold))
    assert fresh is not None
    try:
        assert _records(fresh) == model
        # The copy's index came with its types: no typed question reads the file for them.
        assert all(fresh.live_index()[a].type_some(b"", 0, 0) for a in fresh.agents())
        for agent in (A, B):
            for rec_type in (0x08, 0x09, 0x0A):
                typed = sorted(i for a, i in model if a == agent and 0x08 + i % 3 == rec_type)
                assert fresh.ids_of_type(agent, rec_type) == typed
        ids = {a: fresh.all_ids(a) for a in fresh.agents()}
        index = {a: dict(zip(i, fresh.offsets_of(a, i), strict=True)) for a, i in ids.items()}
        end = fresh.record_end
    finally:
        fresh.close_without_checkpoint()
    assert _log_index(path, end) == index
    data = Path(path).read_bytes()
    live = set(model.values())
    assert [p for p in written if p not in live and p in data] == []
    assert all(p in data for p in live)  # control: what is live is there
