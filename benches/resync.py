"""Open time of a crashed file with 64 MiB of crafted bytes after its log, against without them.

Prints a table (median of several opens each); docs/reliability.md quotes it.
Run from the repository root: ``python benches/resync.py`` (about half a minute).
Each timed open works on a fresh copy of the file, since an open may cut a tail.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time

from memhop.engine import RecordEntry, create_engine, open_engine

GARBAGE = 64 << 20
TAILS = {
    "none": b"",
    "0x01 bytes (the campaign's)": b"\x01" * GARBAGE,
    "0x07 0x00 repeated (a candidate every 2 bytes)": b"\x07\x00" * (GARBAGE // 2),
    "zeros": bytes(GARBAGE),
    "random": os.urandom(GARBAGE),
}
REPEATS = 5


def _base(folder: str, records: int) -> str:
    """A crashed file (no snapshot, so the open scans every frame) of ``records`` records."""
    path = os.path.join(folder, f"base-{records}.meh")
    engine = create_engine(path)
    engine.write_batch(
        [RecordEntry(i % 4, 0x08, i, b'{"text":"%08d"}' % i + b"x" * 200) for i in range(records)]
    )
    engine.close_without_checkpoint()
    return path


def _open_ms(base: str, tail: bytes, folder: str) -> float:
    times = []
    for _ in range(REPEATS):
        path = os.path.join(folder, "trial.meh")
        shutil.copyfile(base, path)
        with open(path, "ab") as f:
            f.write(tail)
        start = time.perf_counter()
        engine = open_engine(path)
        times.append((time.perf_counter() - start) * 1000)
        engine.close_without_checkpoint()
        os.remove(path)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for records in (10_000, 100_000):
            base = _base(folder, records)
            size = os.path.getsize(base)
            plain = _open_ms(base, b"", folder)
            mib = size / 2**20
            print(f"\n{records} records ({mib:.1f} MiB), open without a tail: {plain:.1f} ms")
            print("| 64 MiB tail | open (ms) | ratio |")
            print("| --- | ---: | ---: |")
            for name, tail in TAILS.items():
                if not tail:
                    continue
                ms = _open_ms(base, tail, folder)
                print(f"| {name} | {ms:.1f} | {ms / plain:.2f}x |")


if __name__ == "__main__":
    main()
