"""Crash-safe new files: build under a temporary sibling name, make durable, rename into place.

A reader of the final path sees either nothing (or the file it replaces) or
the complete, fsynced new file: never a half-written one. A kill or a full
disk part-way leaves at most a temporary sibling (``.<name>.<hex>.memhop-tmp``),
which no open ever takes for a database; a failure this process sees removes it,
and the next writable open of ``<name>`` removes one a kill left behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Callable

from memhop.engine.engine import Engine
from memhop.engine.header import HEADER_A_OFFSET, HEADER_B_OFFSET, FileHeader, load_headers
from memhop.engine.seed import discard_seed
from memhop.engine.side_files import SIDECAR_SUFFIXES, TEMP_SUFFIX, TOKEN_BYTES, temp_sibling
from memhop.engine.storefile import StoreFile, fsync_directory
from memhop.errors import InvalidQueryError, MemHopError, StorageIOError

DEFAULT_MODE = 0o644  # before the umask, as for any file a program creates

log = logging.getLogger("memhop.engine")


def remove_stale_temps(target: str) -> list[str]:
    """Remove the temporary siblings of ``target`` and of its side files that no builder
    holds; return their paths. The caller holds ``target``'s lock.

    A builder holds its temporary file's lock until the rename, so a sibling
    whose lock can be taken was left by a killed process. A side file's
    temporary is written under ``target``'s lock, so while the caller holds
    it, one found was left by a killed process too. One that is locked, or
    that cannot be removed, stays (and is logged in the second case).
    """
    folder, name = os.path.split(os.path.abspath(target))
    sidecar = "|".join(re.escape(suffix) for suffix in SIDECAR_SUFFIXES)
    pattern = re.compile(
        rf"\.{re.escape(name)}(?:{sidecar})?\.[0-9a-f]{{{2 * TOKEN_BYTES}}}{re.escape(TEMP_SUFFIX)}"
    )
    try:
        candidates = [entry for entry in os.listdir(folder) if pattern.fullmatch(entry)]
    except OSError:
        return []
    removed = []
    for entry in candidates:
        path = os.path.join(folder, entry)
        try:
            StoreFile.open(path, create=False).close()
        except StorageIOError:
            continue  # being built right now, or gone already
        # Unlocked again before the remove (Windows removes no open file); no
        # builder comes back to a temporary name once it has let go of it.
        try:
            os.remove(path)
        except OSError as exc:
            log.warning("could not remove the stale temporary file %s: %s", path, exc)
        else:
            removed.append(path)
    return removed


def _fresh_engine(path: str, mode: int | None, target: str) -> Engine:
    """Create ``path`` (absent; a sibling built for ``target``) with two fresh headers, fsynced."""
    exact = mode is not None
    file = StoreFile.create_new(
        path, DEFAULT_MODE if mode is None else mode, exact=exact, shown=target
    )
    try:
        fresh = FileHeader().to_bytes()
        file.write_at(HEADER_A_OFFSET, fresh)
        file.write_at(HEADER_B_OFFSET, fresh)
        file.sync("sync new file")
        headers = load_headers(file.view())
    except MemHopError:
        file.close()
        raise
    return Engine(file, headers, {}, file.size)


def _exists_error(target: str, what: str) -> InvalidQueryError:
    return InvalidQueryError(f"{what}: {target} already exists")


def _rename_into_place(temp: str, target: str, *, replace: bool, what: str) -> None:
    """Give the finished ``temp`` the name ``target`` and make the new name durable."""
    try:
        if replace:
            os.replace(temp, target)
        else:
            try:
                # A hard link never replaces: a file that appeared at ``target``
                # meanwhile is refused, not clobbered.
                os.link(temp, target)
            except FileExistsError:
                raise _exists_error(target, what) from None
            except OSError:
                # File systems without hard links (some network and FAT mounts).
                if os.path.lexists(target):
                    raise _exists_error(target, what) from None
                os.replace(temp, target)
            else:
                os.remove(temp)
        fsync_directory(os.path.dirname(os.path.abspath(target)))
    except OSError as exc:
        msg = f"{what}: rename into {target}"
        raise StorageIOError(msg) from exc


def build_beside(
    target: str,
    fill: Callable[[Engine], None],
    *,
    mode: int | None = None,
    replace: bool = False,
    what: str = "create",
) -> Engine:
    """Build a new file at a temporary sibling of ``target``, then rename it into place.

    ``fill`` writes the new engine's records and makes them durable (a
    checkpoint); the fresh headers are fsynced before it runs. ``mode`` sets
    the exact permission bits (a copy keeps its source's); None takes the
    default under the umask. ``replace`` lets the rename replace an existing
    ``target`` (in-place compaction); without it an existing ``target`` is
    InvalidQueryError. On any failure the temporary file is removed and
    ``target`` is untouched. Returns the new engine, open, under ``target``;
    the index seed beside ``target`` (``engine.seed``) is deleted.
    """
    if not replace and os.path.lexists(target):
        raise _exists_error(target, what)
    temp = temp_sibling(target)
    engine: Engine | None = None
    try:
        engine = _fresh_engine(temp, mode, target)
        fill(engine)
        _rename_into_place(temp, target, replace=replace, what=what)
        engine.renamed(target)
        # A seed beside ``target`` was made from the file just replaced (or one long gone).
        discard_seed(target)
    except BaseException:
        if engine is not None:
            with contextlib.suppress(MemHopError):
                engine.close_without_checkpoint()
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise
    return engine
