"""The recall file's blocks: a state read back checks its postings and document terms a
run at a time, as reads first use them; a damaged run read later is refused by name, and
a recall that meets one indexes the domain from its records instead."""

from __future__ import annotations

import logging
import struct
from array import array
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memhop
from memhop.domain import blocks, recall_sections
from memhop.domain.recall_sections import decode_sections, encode_sections
from memhop.errors import CRCMismatchError
from memhop.index import recall_state
from memhop.index.recall_packed import Checked
from memhop.index.recall_state import RecallState
from tests.root.recall_files import TABLE, answers, written

_HEAD = struct.Struct("<8sIII")
_ENTRY = struct.Struct("<QQQ16sQQQ")


def _column_span(body: memoryview, wanted: str) -> tuple[int, int]:
    """Where column ``wanted``'s items lie in a body: [start, end)."""
    at = 0
    for name, _ in recall_state._COLUMNS:
        code, count = recall_state._COLUMN.unpack(body[at : at + recall_state._COLUMN.size])
        at += recall_state._COLUMN.size
        size = count * (1 if code == b"s" else recall_state._ITEM_SIZES[code.decode()])
        if name == wanted:
            return at, at + size
        at += size
    raise AssertionError(wanted)


def _body_offset(data: bytes) -> int:
    """Where the first section's body starts in a recall file."""
    return int(_ENTRY.unpack_from(data, _HEAD.size)[4])


_DOCS = 600
_TERMS = [f"w{i}" for i in range(97)] + [f"v{i}" for i in range(13)] + ["common"]
_SMALL = 256  # bytes a block, in the tests that flip bytes: every column spans blocks


def _state(docs: int) -> RecallState:
    state = RecallState()
    for i in range(docs):
        state.index.put((0, i + 1), 1 + i % 3, i, [f"w{i % 97}", f"v{i % 13}", "common"])
    return state


_PACKED = _state(_DOCS)
_EXPECTED = {t: _PACKED.index.search([t], 3) for t in _TERMS}


@settings(max_examples=60, deadline=None)
@given(
    column=st.sampled_from(["post_docs", "post_tfs", "fwd_terms", "fwd_counts"]),
    at=st.floats(0, 1, exclude_max=True),
    flip=st.integers(1, 255),
)
def test_a_flipped_byte_in_a_run_is_refused_when_the_run_is_read(
    column: str, at: float, flip: int
) -> None:
    state = _PACKED
    expected = _EXPECTED
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recall_sections, "BLOCK", _SMALL)
        data = bytearray(b"".join(encode_sections([(7, 8192, 3, b"d" * 16, state)])))
        body = decode_sections(bytes(data))[7].body
        start, end = _column_span(body, column)
        # A block of the column alone (one it shares with a column the decode reads is
        # refused by the decode, as before)
        first, last = -(-start // _SMALL) * _SMALL, end // _SMALL * _SMALL
        assert last - first > 2 * _SMALL
        data[_body_offset(bytes(data)) + first + int(at * (last - first))] ^= flip
        noted: list[int] = []
        back = decode_sections(bytes(data))[7].state(lambda: noted.append(1))  # reads no run
        refusals: list[str] = []
        for term in _TERMS:  # each term's answer is the one packed, or a refusal by name
            try:
                found = back.index.search([term], 3)
            except CRCMismatchError as exc:
                refusals.append(str(exc))
            else:
                assert found == expected[term]
        try:  # every run: each term's postings, each document's terms and counts
            back.index.packed()
        except CRCMismatchError as exc:
            refusals.append(str(exc))
    assert refusals  # the run holding the flipped byte was read, and refused
    assert set(refusals) == {
        "recall state of agent 0000000000000007: recall state: checksum mismatch"
    }
    assert len(noted) == len(refusals)


def test_a_state_read_back_checks_only_the_blocks_its_reads_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = RecallState()
    for i in range(20_000):  # a new word every 50 documents; "mid", rare, from the 5,000th
        words = [f"w{i % 97}", f"u{i // 50}", "common"]
        state.index.put(
            (0, i + 1), 1, i, [*words, "mid"] if i in (5_000, 10_040, 15_040) else words
        )
    data = b"".join(encode_sections([(7, 8192, 3, b"d" * 16, state)]))
    section = decode_sections(data)[7]
    hashed: list[int] = []
    real = blocks.xxhash.xxh3_64_intdigest

    def counted(part: memoryview) -> int:
        hashed.append(len(part))
        return real(part)

    monkeypatch.setattr(blocks.xxhash, "xxh3_64_intdigest", counted)
    back = section.state()
    decoded = sum(hashed)
    # The columns read whole (each document's length, start and kind: here a document
    # holds three words), not the runs
    assert 0 < decoded < len(section.body) // 3
    hashed.clear()
    assert back.index.search(["mid"], 3) == state.index.search(["mid"], 3)
    # The word's postings, the hits' ids and times: a block or two of each
    assert 0 < sum(hashed) <= 8 * recall_sections.BLOCK < len(section.body) // 10
    hashed.clear()
    assert back.index.search(["mid"], 3) == state.index.search(["mid"], 3)
    assert not hashed  # each block checked once


def test_a_recall_meeting_a_damaged_run_indexes_the_domain_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(recall_sections, "BLOCK", 64)  # every column spans blocks of its own
    path = str(tmp_path / "mem.meh")
    written(path, 30)
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        expected = answers(db.primary())  # control: the state read back answers these
    recall_file = Path(path + ".recall")
    data = bytearray(recall_file.read_bytes())
    body = decode_sections(bytes(data))[0].body
    base = _body_offset(bytes(data))
    start, end = _column_span(body, "post_docs")
    first, last = -(-start // 64) * 64, end // 64 * 64
    assert last - first >= 128
    for at in range(first, last, 64):  # every block of the postings alone
        data[base + at] ^= 0x5A
    recall_file.write_bytes(bytes(data))
    assert decode_sections(bytes(data))[0].state() is not None  # its decode reads no posting
    with (
        caplog.at_level(logging.WARNING, logger="memhop"),
        memhop.open(path, memhop.LocalModel(), TABLE) as db,
    ):
        assert answers(db.primary()) == expected  # indexed from the records instead
    assert "is damaged: it is indexed again" in caplog.text
    # The close wrote the file again from the state built since: it reads whole.
    saved = decode_sections(recall_file.read_bytes())[0].state()
    saved.index.packed()  # every posting and document term read, and checked
    caplog.clear()
    with (
        caplog.at_level(logging.WARNING, logger="memhop"),
        memhop.open(path, memhop.LocalModel(), TABLE) as db,
    ):
        assert answers(db.primary()) == expected
    assert "damaged" not in caplog.text


def test_a_column_read_item_by_item_is_checked_whole_once_read_often() -> None:
    checked: list[tuple[int, int]] = []
    items = memoryview(array("Q", range(10_000))).cast("B").cast("Q")
    column = Checked(items, lambda a, b: checked.append((a, b)), at=800)
    assert column[7] == 7
    assert checked == [(800 + 7 * 8, 800 + 8 * 8)]  # the item's bytes only
    for i in range(Checked.ITEM_READS):
        assert column[i] == i
    assert checked[-1] == (800, 800 + 10_000 * 8)  # then every byte, once
    checked.clear()
    assert column[9_999] == 9_999
    assert column[10:12].tolist() == [10, 11]
    assert not checked  # nothing left to check


def test_a_close_meeting_a_damaged_run_saves_no_state_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(recall_sections, "BLOCK", 64)
    path = str(tmp_path / "mem.meh")
    written(path, 30)
    recall_file = Path(path + ".recall")
    data = bytearray(recall_file.read_bytes())
    body = decode_sections(bytes(data))[0].body
    base = _body_offset(bytes(data))
    start, end = _column_span(body, "fwd_terms")  # the documents' terms: a removal reads them
    for at in range(-(-start // 64) * 64, end // 64 * 64, 64):
        data[base + at] ^= 0x5A
    recall_file.write_bytes(bytes(data))
    with (
        caplog.at_level(logging.WARNING, logger="memhop"),
        memhop.open(path, memhop.LocalModel(), TABLE) as db,
    ):
        me = db.primary()
        assert me.recall("violin")  # control: the state read back answers (no removal yet)
        assert "damaged" not in caplog.text
        me.search()
        me.update(input="violin lessons again", output="noted", created_at=2_000_000_000_000)
    # The close brought the state up to date and packed it: the documents' terms read
    # there did not check; the close went on and saved no state of the domain.
    assert "is damaged: it is indexed again" in caplog.text
    assert 0 not in decode_sections(recall_file.read_bytes())
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        hits = db.primary().recall("violin lessons")
    assert hits[0].text.startswith("violin lessons again")  # indexed from the records
