"""Paths a user controls: a NUL byte is a clear refusal; a copy keeps the source's permissions."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import memhop
from tests.interface.conftest import open_new


def test_a_nul_byte_in_the_open_path_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    """memhop.open("a\\0b") is InvalidQueryError naming the NUL byte; the clean path opens."""
    bad = str(tmp_path / "a\0b.meh")
    with pytest.raises(memhop.InvalidQueryError, match="NUL byte") as info:
        open_new(bad)
    assert info.value.code == 1003
    assert os.listdir(tmp_path) == []
    with open_new(str(tmp_path / "ab.meh")) as db:  # positive control
        assert not db.closed


def test_a_nul_byte_in_the_compaction_path_is_refused(db: memhop.DB, tmp_path: Path) -> None:
    """compact_to with a NUL byte is InvalidQueryError naming it; the clean path compacts."""
    with pytest.raises(memhop.InvalidQueryError, match="NUL byte") as info:
        db.compact_to(str(tmp_path / "c\0d.meh"))
    assert info.value.code == 1003
    good = tmp_path / "cd.meh"
    db.compact_to(good)
    assert good.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_a_compacted_copy_keeps_the_source_permission_bits(
    db: memhop.DB, meh_path: str, tmp_path: Path
) -> None:
    """A 0600 file compacts to a 0600 copy (not one readable by everyone); 0640 stays 0640."""
    for bits in (0o600, 0o640):
        os.chmod(meh_path, bits)
        copy = tmp_path / f"copy-{bits:o}.meh"
        db.compact_to(copy)
        assert os.stat(copy).st_mode & 0o777 == bits
