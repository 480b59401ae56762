"""Helpers shared by the benchmark scripts in ``benches/`` (``engine.py``, ``turn.py``).

Logging, medians and timing, the machine description each report starts with, a count of
other test runs seen on the machine, markdown tables, and :func:`write_section`, which
rewrites one script's section of ``docs/performance.md`` between that script's markers and
keeps the rest of the file (the shared header and the other scripts' sections).

The scripts import this as ``from _common import ...``: running ``python benches/engine.py``
puts ``benches/`` first on ``sys.path``. This file is not a pytest module.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "docs" / "performance.md"

# The scripts that write a section of docs/performance.md, in the order of their sections.
SECTION_ORDER = (
    "engine.py",
    "turn.py",
    "durability.py",
    "scale.py",
    "locomo.py",
    "compaction.py",
    "steady.py",
)

HEADER = (
    "# Performance\n\n"
    "Each section below is written by its own benchmark script, between that script's "
    "`<!-- benches/<script>: begin -->` and `<!-- benches/<script>: end -->` markers: a run "
    "replaces only its own section and keeps the rest of this file. From the repository root, "
    "with memhop installed (`pip install -e '.[bench]'` also brings lmdb), run "
    "`python benches/engine.py` (about four minutes) for the engine section and "
    "`python benches/turn.py` (about a minute) for the turn-loop section; `--quick` makes a "
    "smoke run and `--no-write` only prints. Each section names the machine, the date and the "
    "memhop commit it ran on.\n"
)


# ---- command line ------------------------------------------------------------------------


def parse_args(doc: str | None, quick_help: str, argv: Sequence[str] | None) -> argparse.Namespace:
    """The options both scripts take: --quick, --out, --no-write, --dir."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="markdown report path")
    parser.add_argument("--no-write", action="store_true", help="only print the report")
    parser.add_argument("--dir", default=None, help="parent of the temp dir (default: /tmp)")
    return parser.parse_args(argv)


# ---- measuring ---------------------------------------------------------------------------


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def med(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def timed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes."""
    t0 = time.perf_counter_ns()
    fn()
    return (time.perf_counter_ns() - t0) / 1e9


# ---- the machine -------------------------------------------------------------------------


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def commit(scope: str) -> str:
    """The short HEAD commit, and whether ``scope`` (a path in the repo) has uncommitted changes."""
    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", scope)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} + uncommitted changes in {scope}" if dirty else f"{head} ({scope} clean)"


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _proc_field(path: str, prefix: str) -> str | None:
    """The text after ``prefix`` on the first line of ``path`` that starts with it."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line[len(prefix) :]
    except OSError:
        pass
    return None


def machine(
    tmp: str, *, scope: str, extra: Sequence[tuple[str, str]] = ()
) -> list[tuple[str, str]]:
    """Rows describing the run: commit (``scope``: the code measured), date, hardware, OS.

    ``extra`` rows (library versions) go after the Python version.
    """
    cpu = platform.processor() or "unknown"
    if (model := _proc_field("/proc/cpuinfo", "model name")) is not None:
        cpu = model.split(":", 1)[1].strip()
    ram = "unknown"
    if (total := _proc_field("/proc/meminfo", "MemTotal:")) is not None:
        ram = f"{int(total.split()[0]) / 1024 / 1024:.1f} GiB"
    try:
        parts = (
            subprocess.run(["df", "-T", tmp], capture_output=True, text=True, check=True)
            .stdout.splitlines()[-1]
            .split()
        )
        fs = f"{parts[1]} on {parts[0]} (mounted at {parts[-1]})"
    except (OSError, subprocess.CalledProcessError, IndexError):
        fs = "unknown"
    return [
        ("memhop commit", commit(scope)),
        ("Date", datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")),
        ("CPU", cpu),
        ("Cores", str(os.cpu_count())),
        ("RAM", ram),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", platform.python_version()),
        *extra,
        ("Temp dir filesystem", fs),
        ("Load average (1/5/15 min) at start", load_average()),
    ]


def busy_processes() -> str:
    """Name the other pytest runs seen on the machine, if any."""
    try:
        out = subprocess.run(
            ["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""
    mine = os.getpid()
    hits = [
        line for line in out.splitlines()[1:] if "pytest" in line and int(line.split()[0]) != mine
    ]
    return f"{len(hits)} pytest process(es)" if hits else ""


# ---- report ------------------------------------------------------------------------------


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def markers(script: str) -> tuple[str, str]:
    """The begin and end markers of ``script``'s section (``script``: e.g. ``"turn.py"``)."""
    return f"<!-- benches/{script}: begin -->", f"<!-- benches/{script}: end -->"


def write_section(path: Path, script: str, section: str) -> None:
    """Put ``section`` between ``script``'s markers in ``path``; keep the rest of the file.

    An earlier section of the script is replaced. Without one, the section goes before the
    first section of a script that comes later in SECTION_ORDER, else at the end. A missing
    or empty file starts with HEADER.
    """
    begin, end = markers(script)
    block = f"{begin}\n{section.strip(chr(10))}\n\n{end}\n"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if not text.strip():
        text = HEADER
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        later = SECTION_ORDER[SECTION_ORDER.index(script) + 1 :] if script in SECTION_ORDER else ()
        at = min((text.find(markers(s)[0]) for s in later if markers(s)[0] in text), default=-1)
        if at >= 0:
            text = text[:at] + block + "\n" + text[at:]
        else:
            text = text.rstrip("\n") + "\n\n" + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ---- fsync ---------------------------------------------------------------------------------


@contextmanager
def fsync_off() -> Iterator[None]:
    """``os.fsync`` as a no-op: for building fixtures, or a run that measures CPU alone."""
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def fsync_reference(directory: str, probes: int = 50) -> float:
    """Median seconds of a 300-byte append + fsync to a plain file in ``directory``, now.

    Printed beside results that hang on the disk: this machine's fsync swings with the hour.
    """
    path = os.path.join(directory, "fsync-reference.bin")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    seconds = []
    try:
        for _ in range(probes):
            started = time.perf_counter()
            os.write(fd, b"x" * 299 + b"\n")
            os.fsync(fd)
            seconds.append(time.perf_counter() - started)
    finally:
        os.close(fd)
        os.remove(path)
    return statistics.median(seconds)


class FsyncCounter:
    """Counts ``os.fsync`` / ``os.fdatasync`` calls (any thread) while installed."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()
        self._waited: dict[int, float] = {}  # thread id -> seconds in its own syncs

    def waited(self, thread_id: int) -> float:
        """Seconds the thread has spent in its own syncs while installed."""
        return self._waited.get(thread_id, 0.0)

    @contextmanager
    def installed(self) -> Iterator[FsyncCounter]:
        real_fsync = os.fsync
        real_fdatasync = getattr(os, "fdatasync", None)

        def counted(real: Callable[[int], None]) -> Callable[[int], None]:
            def call(fd: int) -> None:
                with self._lock:
                    self.calls += 1
                started = time.perf_counter()
                try:
                    real(fd)
                finally:
                    me = threading.get_ident()
                    with self._lock:
                        self._waited[me] = self.waited(me) + time.perf_counter() - started

            return call

        os.fsync = counted(real_fsync)
        if real_fdatasync is not None:
            os.fdatasync = counted(real_fdatasync)
        try:
            yield self
        finally:
            os.fsync = real_fsync
            if real_fdatasync is not None:
                os.fdatasync = real_fdatasync


def publish(args: argparse.Namespace, script: str, section: str) -> int:
    """Print a script's section and, unless ``--no-write``, write it into ``--out``."""
    print(section)
    if not args.no_write:
        write_section(Path(args.out), script, section)
        log(f"wrote the {script} section of {args.out}")
    return 0
