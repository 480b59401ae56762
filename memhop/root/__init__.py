"""The composition root: take the domain lock, compose the layers, return records.

Responsibility: open the file (validation first), keep one context per agent
domain (lock, model, mirrors, current scene, open turn), and run every
``Session`` call inside its domain's lock. Cross-layer work is composed here.

Contract:
- Lock order: the registry lock (``Root._agents_mu``) is never taken while a
  domain lock is held; a domain lock is taken before the engine's lock.
  Different domains run in parallel, a domain's first load (its mirrors,
  O(domain)) included: it holds no lock another domain needs.
- A refused call writes nothing and asks no model: validation comes first.
- Results are records (``memhop.records``) or small frozen views; the facade
  maps them to public types.

Traps:
- The open turn lives only in memory: a reclaimed (idle) domain or a reopen
  loses it, and the next turn write says "no turn is open".
- ``stats`` takes no domain lock.

If you change this: tests/interface drives these paths through the facade.
"""

from memhop.root.opening import open_root
from memhop.root.root import AgentEntry, Root

__all__ = ["AgentEntry", "Root", "open_root"]
