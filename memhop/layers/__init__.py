"""Record primitives per layer (L0 profile … L5 plan), over the engine.

Responsibility: read, write, enumerate and delete one layer's records in one
domain. Every function takes the engine and an agent id first; there is no
LLM, no lock and no policy here: the composition root takes the domain lock
and composes these functions, and cross-layer work (a delete cascade) is
composed there too.

Contract:
- One id, one record type: a read of an id holding another type is
  NotFoundError, as if absent (``codec.read``).
- "Cannot read" is never "not found": a read of a damaged record raises its
  own code naming the record and offset, and the engine counts it.
- Damage is contained to the record it hits: listings (``codec.collect``)
  skip a damaged record. Strict scans (``codec.collect_strict``) are used
  wherever the result decides a delete, and an enumeration completes before
  the first tombstone is written.
- Enumerations are ascending by id, so two runs over one file agree.

Traps:
- Layer modules never import each other (tests/test_layering.py); shared
  helpers live in ``codec``.
- The shared L3 pool is the domain ``ids.SHARED_POOL_AGENT_ID``; graph
  functions address it themselves, never a tenant domain.

If you change this: keep each module to one layer and under ~400 lines.
"""
