"""Engine: the append-only log of one ``.meh`` file and its in-memory indexes.

Two indexes are kept (``LiveIndex``): ``agent -> id hash -> frame offset``
(live records only) and ``agent -> record type -> ids``. Every mutation appends
frames through the ``LogWriter`` and changes the indexes only once an fsync
covers them (``Commits``), so an acknowledged write is on disk and a failed one
is invisible. One re-entrant lock serialises the file, but not the fsyncs:
writers from several threads wait for them without it and share them.
Enumerations copy ids under the lock and yield without it, so a caller may
read inside its loop.

``Engine`` is one part per concern over the state they share
(``state.EngineState``: the file, log, indexes, lock and the open and
writable checks): reads (``reads``), writes and commit modes (``mutations``),
checkpoints, seeds and closing (``checkpoints``).
"""

from __future__ import annotations

from memhop.engine.checkpoints import EngineCheckpoints
from memhop.engine.mutations import EngineMutations
from memhop.engine.reads import EngineReads

__all__ = ["Engine"]


class Engine(EngineReads, EngineMutations, EngineCheckpoints):
    """An open ``.meh`` file. Build one with ``create_engine`` or ``open_engine``."""
