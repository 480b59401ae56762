"""A real full disk: a small tmpfs filled to ENOSPC under a create and a compaction.

Runs only as root where a tmpfs can be mounted (CI containers usually can);
skipped otherwise. The injected-fault tests in test_io_faults.py cover the
same paths everywhere.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import memhop
from memhop.engine import RecordEntry, compact_to, create_engine, open_engine
from memhop.errors import StorageIOError

TMPFS_BYTES = 256 * 1024


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs mounted under tmp_path, unmounted afterwards."""
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root on Linux")
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(mount)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path, leave: int) -> None:
    """Fill ``folder``'s file system until at most ``leave`` bytes are free."""
    with open(folder / "ballast", "wb") as f:
        while True:
            free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
            if free <= leave:
                return
            try:
                f.write(b"\0" * min(4096, free - leave))
                f.flush()
            except OSError:
                return


def test_a_compaction_onto_a_full_disk_leaves_nothing_and_a_retry_works(
    tmp_path: Path, full_disk: Path
) -> None:
    """ENOSPC mid-copy: no file at newPath, no temporary left, and a retry elsewhere succeeds."""
    source_path = str(tmp_path / "source.meh")
    source = create_engine(source_path)
    try:
        source.write_batch([RecordEntry(0, 0x08, i, b"y" * 500) for i in range(1, 2001)])
        dest = str(full_disk / "copy.meh")
        with pytest.raises(StorageIOError) as info:
            compact_to(source, dest)  # about 1 MiB into 256 KiB
        assert isinstance(info.value.__cause__, OSError)
        assert os.listdir(full_disk) == []
        # Positive control: the same call onto a disk with room makes the whole copy.
        roomy = str(tmp_path / "copy.meh")
        compact_to(source, roomy)
    finally:
        source.close()
    copy = open_engine(roomy)
    try:
        assert copy.stats()[1] == 2000
    finally:
        copy.close()


def test_a_create_on_a_full_disk_leaves_no_file(full_disk: Path) -> None:
    """memhop.open of a new path on a full disk fails and leaves nothing; with room it works."""
    _fill(full_disk, leave=0)
    path = str(full_disk / "new.meh")
    profile = memhop.ProfileInput(name="kid")
    with pytest.raises(memhop.StorageIOError):
        memhop.open(path, memhop.LocalModel(), profile=profile)
    assert sorted(os.listdir(full_disk)) == ["ballast"]
    os.remove(full_disk / "ballast")
    with memhop.open(path, memhop.LocalModel(), profile=profile) as db:
        assert db.primary().get_l0().name == "kid"
