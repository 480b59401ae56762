"""Read-only inspection of a ``.meh`` file: for notebooks, shells and audits.

Public as ``memhop.inspect`` (the function), ``memhop.Inspector`` and
``memhop.Table``; the package is ``memhop.inspection`` so that ``memhop.inspect``
names one thing.

Responsibility: ``inspect(path) -> Inspector`` answers what a file holds
(agents, profile, scenes, topics with provenance, content, events, plans, L1,
L3 graphs, every frame, space by type, a full verification) as ``Table``s,
without a model, a lock, or a write.

Contract:
- Never writes, truncates, repairs or locks; the file's bytes and mtime stay
  as they were. Works while a ``DB`` in another process holds the file: it
  sees every complete frame on disk and stops at a torn tail. ``refresh()``
  reads again.
- Reads only through the engine's pure functions (headers, snapshot, scan,
  frames) and the records' decoders; never through ``memhop.root``.
- Tables hold hex ids, enum names, aware UTC datetimes and a ``scene_id`` on
  every row that belongs to a scene; pandas is imported only by ``to_pandas``.

Traps:
- A read holds the whole file in memory (a mapping could be cut under it by a
  writer's truncation, which kills the process); ``refresh()`` replaces it.
"""

from memhop.inspection.audit import Verification
from memhop.inspection.inspector import Inspector, inspect
from memhop.render import Table

__all__ = ["Inspector", "Table", "Verification", "inspect"]
