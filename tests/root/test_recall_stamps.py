"""Stamps: a close whose session changed nothing in a domain's recall state vouches for the
saved section as of the close (64 bytes appended), so the next open hashes no older prefix."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import pytest

import memhop
from memhop.domain import recall_file
from memhop.domain.recall_sections import STAMP_SIZE, decode_sections, encode_stamp
from memhop.engine import seed as seed_module
from tests.root.recall_files import T0, TABLE, answers, written


def _read_only_session(path: str) -> list[list[tuple[str, float]]]:
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search()  # writes the turn it opens: the file grows past the section's end
        return answers(me)


def _section(path: str) -> tuple[int, int]:
    """(covered end, stamps) of the primary's section."""
    section = decode_sections(Path(path + ".recall").read_bytes())[0]
    return section.covered_end, section.stamps


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The ends of every pass over the file's bytes for a prefix digest."""
    passes: list[list[int]] = []
    digests = seed_module.prefix_digests

    def counted(view: bytes, ends: Sequence[int], last: int) -> list[bytes]:
        passes.append(list(ends))
        return digests(view, ends, last)

    monkeypatch.setattr(seed_module, "prefix_digests", counted)
    return passes


def test_a_read_only_session_stamps_its_section_and_the_next_open_hashes_nothing(
    tmp_path: Path, hashed: list[list[int]]
) -> None:
    path = str(tmp_path / "mem.meh")
    written(path, 12)
    size, (end, stamps) = Path(path + ".recall").stat().st_size, _section(path)
    assert stamps == 0
    first = _read_only_session(path)
    assert Path(path + ".recall").stat().st_size == size + 64  # one stamp, the body kept
    stamped_end, stamps = _section(path)
    assert stamps == 1
    assert stamped_end > end  # vouched as of the close, past the turn the session opened
    hashed.clear()
    assert _read_only_session(path) == first
    assert [e for e in hashed if e[0] < stamped_end] == []  # no older prefix was hashed
    # Control: the same file without its stamps is trusted at the old end, which is hashed.
    Path(path + ".recall").write_bytes(Path(path + ".recall").read_bytes()[:size])
    hashed.clear()
    assert _read_only_session(path) == first
    assert [end] in hashed


def test_a_stamped_file_answers_as_a_full_build(tmp_path: Path) -> None:
    """Sessions with and without turns, in turn: whatever the file holds, the answers are
    those of a domain indexed from its records alone."""
    path = str(tmp_path / "mem.meh")
    written(path, 9)
    for n in range(4):
        _read_only_session(path)
        if n % 2:
            with memhop.open(path, memhop.LocalModel(), TABLE) as db:
                me = db.primary()
                me.search()
                me.update(input=f"a heron at the pier {n}", output="ok", created_at=T0 + 90 + n)
    saved = _read_only_session(path)
    Path(path + ".recall").unlink()
    Path(path + ".scenemap").unlink()
    assert _read_only_session(path) == saved  # built from the records


def test_a_torn_or_foreign_stamp_is_left_out(tmp_path: Path) -> None:
    """A stamp counts only whole, checked, and naming the section's own body; the first
    that does not check ends the stamps (a torn append)."""
    path = str(tmp_path / "mem.meh")
    written(path, 6)
    whole = Path(path + ".recall").read_bytes()
    section = decode_sections(whole)[0]
    end = section.covered_end
    good = encode_stamp(section, end + 100, 7, b"d" * 16)
    later = encode_stamp(section, end + 200, 8, b"e" * 16)
    assert len(good) == STAMP_SIZE == 64
    stamped = decode_sections(whole + good)[0]
    assert (stamped.covered_end, stamped.seal, stamped.digest) == (end + 100, 7, b"d" * 16)
    assert decode_sections(whole + good + later)[0].covered_end == end + 200  # the last wins
    assert decode_sections(whole + good[:40])[0].covered_end == end  # torn
    assert decode_sections(whole + good[:40] + later)[0].covered_end == end  # none read past it
    flipped = bytearray(good)
    flipped[30] ^= 1
    assert decode_sections(whole + bytes(flipped))[0].covered_end == end
    other = dataclasses.replace(section, checksum=section.checksum ^ 1)
    foreign = encode_stamp(other, end + 300, 0, b"f" * 16)
    assert decode_sections(whole + foreign)[0].covered_end == end  # another body's stamp
    assert decode_sections(whole + foreign + good)[0].covered_end == end + 100  # read past it


def test_stamps_past_the_limit_write_the_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_file, "STAMPS_MAX", 2)
    path = str(tmp_path / "mem.meh")
    written(path, 6)
    answers = _read_only_session(path)
    assert _section(path)[1] == 1
    assert _read_only_session(path) == answers
    assert _section(path)[1] == 2
    assert _read_only_session(path) == answers
    end, stamps = _section(path)
    assert stamps == 0  # written again, each section as of that close
    assert _read_only_session(path) == answers
    assert _section(path)[0] > end
