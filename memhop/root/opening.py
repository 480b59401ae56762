"""Opening a ``.meh`` file: validate everything, then decide create, open or refuse.

Nothing touches the path until the configuration is valid, so a refused open
leaves no file behind. The primary profile follows upstream's table: a file's
own profile wins; a file without one is seeded from the argument or refused.
"""

from __future__ import annotations

import contextlib
import os
import weakref

from memhop import ids
from memhop.config import Defaults, ProfileInput
from memhop.engine import Engine, create_engine, open_engine
from memhop.engine.storefile import LOCK_MESSAGE
from memhop.errors import ConfigError, InvalidQueryError, MemHopError, StorageIOError
from memhop.layers import profile
from memhop.llm import model_of
from memhop.records import AgentType, ProfileSlot
from memhop.root.compaction import identity
from memhop.root.root import Clock, Root, wall_clock_ms

# Readings a clock may give: Unix milliseconds, as every stamp memhop stores. The bands
# refused are check_ms's: seconds and microseconds, the two usual slips.
_SECONDS_BAND = (1_000_000_000, 100_000_000_000)
_MICROSECONDS_FROM = 100_000_000_000_000

# The roots this process holds open, so a second open can name the DB that
# holds a file (a re-run notebook cell, a handle left in Out[]). Matched by
# each root's current (device, inode): an in-place compaction changes it.
_OPEN_HERE: weakref.WeakSet[Root] = weakref.WeakSet()


def _holder(key: tuple[int, int]) -> Root | None:
    for root in list(_OPEN_HERE):
        if not root.closed and root.file_identity == key:
            return root
    return None


def _refuse_if_open_here(path: str) -> None:
    """StorageIOError naming the DB of this process that already holds ``path``."""
    key = identity(path)
    holder = None if key is None else _holder(key)
    if holder is None:
        return
    msg = (
        f"{LOCK_MESSAGE}: {path} is already open in this process as "
        f"<memhop.DB {holder.engine.path!r} open>; close() that DB first, "
        "or read beside it with memhop.inspect(path)"
    )
    raise StorageIOError(msg)


def _remember(root: Root) -> None:
    _OPEN_HERE.add(root)


def _open_existing(path: str) -> Engine:
    """``open_engine``, with a lock refusal that names the path."""
    try:
        return open_engine(path)
    except StorageIOError as exc:
        if str(exc) != LOCK_MESSAGE:
            raise
        msg = f"{LOCK_MESSAGE}: {path} is held by another handle; memhop.inspect(path) reads it"
        raise StorageIOError(msg) from exc


def _engine_for(path: str, seed: ProfileInput | None) -> tuple[Engine, bool]:
    """Open the file at ``path`` or create it when a profile can seed it; True if created."""
    try:
        is_dir = os.path.isdir(path)
        exists = os.path.lexists(path)
    except OSError as exc:
        msg = f"stat {path}"
        raise StorageIOError(msg) from exc
    if is_dir:
        msg = f"database path is a directory: {path}"
        raise InvalidQueryError(msg)
    if exists:
        _refuse_if_open_here(path)
        return _open_existing(path), False
    if seed is None:
        msg = f"no database at {path} and no primary profile to seed one with"
        raise ConfigError(msg)
    return create_engine(path), True


def _seed_primary(engine: Engine, seed: ProfileInput | None, now_ms: int) -> None:
    if profile.has_profile(engine, ids.PRIMARY_AGENT_ID):
        return  # the file is the source of truth; the argument is ignored
    if seed is None:
        msg = "the database has no primary profile; pass one to seed it"
        raise ConfigError(msg)
    slot = ProfileSlot(
        name=seed.require_name(),
        role=seed.role,
        personality=seed.personality,
        preferences=dict(seed.preferences),
        agent_type=AgentType.PRIMARY,
        updated_at_ms=now_ms,
    )
    profile.put_profile(engine, ids.PRIMARY_AGENT_ID, slot)


def checked_clock(clock: object) -> Clock:
    """The clock a DB runs on: ``clock`` (None: the wall clock), each reading checked.

    Read once here, so a clock that fails or answers in seconds is refused
    (ConfigError) before the file is touched; a later bad reading raises the
    same error from the call that read it.
    """
    if clock is None:
        return wall_clock_ms
    if not callable(clock):
        msg = f"clock must be a callable returning Unix milliseconds, not {type(clock).__name__}"
        raise ConfigError(msg)
    source = clock

    def read() -> int:
        now = source()
        if isinstance(now, bool) or not isinstance(now, int):
            msg = f"clock returned {type(now).__name__}, not an integer of Unix milliseconds"
            raise ConfigError(msg)
        if now < 0 or _SECONDS_BAND[0] <= now < _SECONDS_BAND[1] or now > _MICROSECONDS_FROM:
            msg = (
                f"clock returned {now}, which is not Unix milliseconds (negative, or in the"
                " band of seconds [1e9, 1e11) or of microseconds (above 1e14))"
            )
            raise ConfigError(msg)
        return now

    read()
    return read


def open_root(
    path: str | os.PathLike[str],
    llm: object,
    defaults: Defaults | None = None,
    seed: ProfileInput | None = None,
    clock: object = None,
) -> Root:
    """Validate, open or create, seed the primary profile, load the registry.

    ``clock`` (``checked_clock``) gives every time the DB reads; None is the wall clock.
    """
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        msg = f"path must be a str or os.PathLike of str, not {type(path).__name__}"
        raise ConfigError(msg)
    if not path:
        msg = "path is required"
        raise ConfigError(msg)
    if "\0" in path:
        msg = f"path contains a NUL byte: {path!r}"
        raise InvalidQueryError(msg)
    model = model_of(llm)
    table = Defaults() if defaults is None else defaults
    if not isinstance(table, Defaults):
        msg = f"defaults must be a memhop.Defaults, not {type(table).__name__}"
        raise ConfigError(msg)
    table.validate()
    if seed is not None:
        if not isinstance(seed, ProfileInput):
            msg = f"profile must be a memhop.ProfileInput, not {type(seed).__name__}"
            raise InvalidQueryError(msg)
        seed.require_name()
    now = checked_clock(clock)
    engine, created = _engine_for(path, seed)
    try:
        _seed_primary(engine, seed, now())
        root = Root(engine, table, model, now)
        _remember(root)
        return root
    except MemHopError:
        with contextlib.suppress(MemHopError):
            engine.close_without_checkpoint()
        if created:  # a file this call made and could not finish is not left behind
            with contextlib.suppress(OSError):
                os.remove(path)
        raise
