"""DB: one open ``.meh`` file and its domains (the facade; no logic lives here)."""

from __future__ import annotations

import os
from collections.abc import Callable
from types import TracebackType
from typing import NoReturn

from memhop.api import _args, _mapping_upkeep, _salvage
from memhop.api._surfaces import Surfaces
from memhop.api.results_upkeep import AgentInfo, DBStats, SalvageReport
from memhop.api.session import Session
from memhop.config import Defaults, LlmConfig, ProfileInput
from memhop.llm import Model, model_of
from memhop.root import Root, open_root, salvage
from memhop.root.ops import AgentOps


def open(
    path: str | os.PathLike[str],
    llm: LlmConfig | Model,
    defaults: Defaults | None = None,
    profile: ProfileInput | None = None,
    *,
    clock: Callable[[], int] | None = None,
) -> DB:
    """Open (or, with a primary profile, create) the memory file at ``path``.

    ``clock`` is a zero-argument callable returning Unix milliseconds (None:
    the wall clock); every time memhop reads (Dream's cadence, retention,
    decay, the stamps it writes) comes from it, so a host replaying history
    runs on the history's time. Everything is validated before the path is
    touched, so a refused open leaves no file. ConfigError for a
    half-specified endpoint, bad defaults, a clock that does not answer in
    milliseconds, or a missing file with no profile to seed it;
    StorageIOError containing "another instance" when the file is already
    open, in this process or another.
    """
    return DB(open_root(path, llm, defaults, profile, clock))


class DB:
    """An open memory file. Use it as a context manager; ``close()`` checkpoints."""

    def __init__(self, root: Root) -> None:
        self._root = root
        self._surfaces = Surfaces()  # this DB's alone, emptied at its close

    def __enter__(self) -> DB:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._root.closed:
            self.close()

    def __aenter__(self) -> NoReturn:
        """Refused: this DB is synchronous (``memhop.aio.open`` is the asyncio face).

        ``async with memhop.open(...)`` has opened the file by the time this
        runs, so the refusal closes it first: the file is never left locked.
        """
        path = self._root.engine.path
        if not self._root.closed:
            self.close()
        msg = (
            f"the memhop.DB of {path!r} is synchronous and does not support 'async with';"
            " it has been closed, so the file is free. From asyncio use"
            " 'async with memhop.aio.open(...) as db' (the same arguments, every call"
            " awaited), or 'with memhop.open(...) as db' in synchronous code"
        )
        raise TypeError(msg)

    def __aexit__(self, *exc_info: object) -> NoReturn:
        # ``async with`` needs it to exist; __aenter__ has refused before it could run.
        self.__aenter__()

    def __repr__(self) -> str:
        state = "closed" if self._root.closed else "open"
        return f"<memhop.DB {self._root.engine.path!r} {state}>"

    @property
    def closed(self) -> bool:
        return self._root.closed

    def primary(self) -> Session:
        """The file's primary domain (agent id 0000000000000000)."""
        self._root.check_open()
        return Session(AgentOps(self._root, 0), self._surfaces)

    def sub_agent(self, llm: LlmConfig | Model, profile: ProfileInput) -> Session:
        """The sub-agent named ``profile.name`` (created on first use), talking to ``llm``.

        The name is the handle: trimmed, 1 to 256 bytes, fixed at creation.
        """
        agent_id = self._root.sub_agent(model_of(llm), profile)
        return Session(AgentOps(self._root, agent_id), self._surfaces)

    def agent(self, llm: LlmConfig | Model, agent_id: str) -> Session:
        """Reach an existing domain by the id ``Session.agent_id`` gave; creates nothing.

        InvalidQueryError for a malformed id, AgentNotFoundError for an id this
        file never registered.
        """
        parsed = _args.agent_id(agent_id)
        ops = AgentOps(self._root, self._root.agent(model_of(llm), parsed))
        return Session(ops, self._surfaces)

    def agents(self) -> list[AgentInfo]:
        """The primary first, then every sub-agent in id order."""
        rows = self._root.agents()
        return [_mapping_upkeep.agent_info(r.agent_id, r.name, primary=r.primary) for r in rows]

    def checkpoint(self) -> None:
        """Write the index snapshot now (``close`` does it too)."""
        self._root.checkpoint()

    def compact_to(self, new_path: str | os.PathLike[str]) -> None:
        """Write a copy holding only live records to ``new_path`` (which must not exist).

        Deleted payloads are absent from the copy; the open file is untouched.
        """
        self._root.compact_to(new_path)

    def compact(self) -> None:
        """Compact the open file in place: keep only live records, under the same name.

        Deleted and superseded payloads, tombstones and old snapshots leave
        the file. The copy is made beside it while every Session keeps
        working (calls wait only for the last few milliseconds, when what was
        written meanwhile is copied and the copy takes the name), fsynced and
        renamed over it, so a crash leaves the old file or the new one, whole.
        A record deleted while the copy is made has its payload zeroed in it.
        Current scenes and open turns survive; background Dream passes wait
        for that last step only.
        """
        self._root.compact()

    def salvage_to(self, new_path: str | os.PathLike[str]) -> SalvageReport:
        """Copy every live record that still verifies to ``new_path`` (which must not exist).

        The way out of a damaged file, which ``compact_to`` refuses to copy:
        damaged records are left behind and listed in the report (domain, id,
        offset, record type, reason). Crash-safe as ``compact_to``; the open
        file is untouched. Open the copy with ``memhop.open``.
        """
        return _salvage.salvage_report(*salvage.salvage_to(self._root, new_path))

    def stats(self) -> DBStats:
        """File bytes, live records, model usage per domain, and the damage met so far."""
        file_bytes, records, usage = self._root.stats()
        damage = salvage.damage(self._root)
        return _mapping_upkeep.db_stats(file_bytes, records, usage, damage)

    def close(self) -> None:
        """Checkpoint and release the file; a second close raises ClosedError."""
        try:
            self._root.close()
        finally:
            self._surfaces.clear()
