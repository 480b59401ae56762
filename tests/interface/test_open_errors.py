"""What a refused open says: the path the user gave and the reason, never an internal name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import memhop
from tests.faults import flip_byte

from .conftest import open_new

HEADER_SLOT = 4096  # header A at 0, header B at 4096 (storage.md)


def test_a_missing_directory_is_named_with_the_path_the_user_gave(tmp_path: Path) -> None:
    folder = tmp_path / "not-yet"
    path = folder / "a.meh"
    with pytest.raises(memhop.StorageIOError) as refused:
        open_new(str(path))
    text = str(refused.value)
    assert text == f"cannot create {path}: the directory {folder} does not exist"
    assert refused.value.code == 5001
    assert "memhop-tmp" not in text  # the temporary sibling it builds in stays internal
    assert not folder.exists()
    folder.mkdir()  # the control: the same open succeeds once the directory is there
    open_new(str(path)).close()
    assert os.listdir(folder) == ["a.meh"]


def test_a_copy_into_a_missing_directory_names_the_destination(tmp_path: Path) -> None:
    folder = tmp_path / "gone"
    target = folder / "copy.meh"
    with open_new(str(tmp_path / "src.meh")) as db:
        with pytest.raises(memhop.StorageIOError) as refused:
            db.compact_to(str(target))
        assert (
            str(refused.value) == f"cannot create {target}: the directory {folder} does not exist"
        )
        folder.mkdir()  # the control
        db.compact_to(str(target))
    assert os.listdir(folder) == ["copy.meh"]


def test_a_relative_path_is_named_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(memhop.StorageIOError) as refused:
        open_new(os.path.join("sub", "agent.meh"))
    sub = os.path.join("sub", "agent.meh")
    assert str(refused.value) == f"cannot create {sub}: the directory sub does not exist"
    os.mkdir("sub")  # the control
    open_new(sub).close()


@pytest.mark.parametrize("size", [3000, 20_000], ids=["under-the-headers", "past-the-headers"])
def test_a_file_that_is_not_a_meh_file_is_named_with_the_reason(tmp_path: Path, size: int) -> None:
    path = tmp_path / "notes.meh"
    path.write_bytes((b"not memhop\n" * (size // 11 + 1))[:size])
    with pytest.raises(memhop.CorruptionError) as refused:
        memhop.open(str(path), memhop.LocalModel())
    text = str(refused.value)
    assert text.startswith(f"{path} is not a memhop file: ")
    assert refused.value.code == 5005
    if size < 2 * HEADER_SLOT:
        assert "file too small for dual headers" in text
    else:
        assert "both file headers are invalid (A: invalid magic bytes; B: invalid magic" in text
    assert path.read_bytes()[:11] == b"not memhop\n"  # a refused open writes nothing


def test_a_meh_file_with_both_headers_damaged_is_named_but_not_called_foreign(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent.meh"
    open_new(str(path)).close()
    memhop.open(str(path), memhop.LocalModel()).close()  # the control: it opens as made
    for slot in (0, HEADER_SLOT):
        flip_byte(str(path), slot + 100)  # inside the CRC-covered fields, past the magic
    with pytest.raises(memhop.CorruptionError) as refused:
        memhop.open(str(path), memhop.LocalModel())
    text = str(refused.value)
    assert text.startswith(f"{path}: both file headers are invalid (A: crc32 mismatch")
    assert "not a memhop file" not in text
