"""SlotCache: decoded slots are reused only while the file still holds them unchanged."""

from __future__ import annotations

from unittest import mock

import pytest

from memhop.domain.slot_cache import SlotCache
from memhop.engine import Engine, create_engine, open_engine
from memhop.errors import CRCMismatchError
from memhop.ids import content_id
from memhop.layers import archive
from memhop.records import ArchiveSlot
from tests.faults import flip_byte

TOPIC = 77


def _slot(seq: int, text: str) -> ArchiveSlot:
    return ArchiveSlot(
        id_hash=content_id(TOPIC, seq), seq=seq, topic_id=TOPIC, created_at=seq, content=text
    )


def _write(engine: Engine, *slots: ArchiveSlot) -> list[int]:
    return [archive.write_content(engine, 0, s).id_hash for s in slots]


def test_a_second_read_decodes_nothing_and_an_overwrite_is_seen(meh_path: str) -> None:
    """Hits skip the decoder; an overwritten record moves its offset and is read afresh."""
    engine = create_engine(meh_path)
    cache = SlotCache()
    ids = _write(engine, _slot(1, "one"), _slot(2, "two"))
    assert {s.content for s in cache.read(engine, 0, ids)} == {"one", "two"}
    with mock.patch.object(archive, "read_contents") as reader:
        again = cache.read(engine, 0, ids)
        reader.assert_not_called()
    assert {s.content for s in again} == {"one", "two"}
    _write(engine, _slot(1, "one, edited"))
    assert {s.content for s in cache.read(engine, 0, ids)} == {"one, edited", "two"}
    engine.close()


def test_a_deleted_record_is_absent_though_it_was_cached(meh_path: str) -> None:
    """Deletion needs no invalidation: the index no longer names the record."""
    engine = create_engine(meh_path)
    cache = SlotCache()
    ids = _write(engine, _slot(1, "keep"), _slot(2, "forget"))
    assert len(cache.read(engine, 0, ids)) == 2
    archive.delete_contents(engine, 0, [ids[1]])
    assert [s.content for s in cache.read(engine, 0, ids)] == ["keep"]
    engine.close()


def test_the_cache_is_bounded(meh_path: str) -> None:
    """Past its limit the least recently used entries go; reads stay correct."""
    engine = create_engine(meh_path)
    cache = SlotCache(limit=3)
    ids = _write(engine, *(_slot(i, f"line {i}") for i in range(1, 7)))
    assert len(cache.read(engine, 0, ids)) == 6
    assert len(cache) == 3
    assert len(cache.read(engine, 0, ids)) == 6
    engine.close()


def test_a_damaged_record_is_left_out_and_counted(meh_path: str) -> None:
    """A damaged miss is left out of the answer (damage contained) and counted by the engine."""
    engine = create_engine(meh_path)
    ids = _write(engine, _slot(1, "fine"), _slot(2, "damaged"))
    offset = engine.offset_of(0, ids[1])
    engine.close()
    assert offset is not None
    flip_byte(meh_path, offset + 30)
    engine = open_engine(meh_path)
    cache = SlotCache()
    assert [s.content for s in cache.read(engine, 0, ids[:1])] == ["fine"]  # the control
    assert engine.damage() == (0, 0)
    assert [s.content for s in cache.read(engine, 0, ids)] == ["fine"]
    assert engine.damage() == (1, 0)
    with pytest.raises(CRCMismatchError, match=f"at offset {offset}"):
        engine.read(0, ids[1])  # the record itself still says what is wrong
    engine.close()


def test_a_record_is_read_once_while_its_frame_stays_and_a_kept_write_is_not_read(
    meh_path: str,
) -> None:
    """``record`` calls its reader again only once the record moved; ``keep_at`` stores a
    write's value at the offset the write answered, so no reader runs for it."""
    engine = create_engine(meh_path)
    cache = SlotCache()
    reads: list[int] = []

    def read(eng: Engine, agent_id: int, id_hash: int) -> str:
        reads.append(id_hash)
        (slot,) = archive.read_contents(eng, agent_id, [id_hash])
        return slot.content

    (first,) = _write(engine, _slot(1, "one"))
    assert cache.record(engine, 0, first, read) == "one"
    assert cache.record(engine, 0, first, read) == "one"
    assert reads == [first]  # the second answer was the kept one
    _write(engine, _slot(1, "one, edited"))
    assert cache.record(engine, 0, first, read) == "one, edited"
    assert reads == [first, first]  # control: a moved record is read again
    at = engine.write(0, 1, 4242, b"{}")
    cache.keep_at(4242, at, "kept")
    assert cache.record(engine, 0, 4242, read) == "kept"
    assert reads == [first, first]
    engine.close()
