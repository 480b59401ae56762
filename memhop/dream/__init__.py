"""Dream: the consolidation pass — retention sweeps, L2 folds, the L1 layer, L0 distillation.

Responsibility: run one pass over one agent domain (dream.md §4) and report
it. The composition root (``memhop.root.dreams``) builds the ``DreamEnv``,
runs passes in the foreground (``Session.dream``) or on a named background
thread after ``update``; the pass returns the public ``DreamReport`` itself.

Stage order (a closed vocabulary; a stage never reached is absent):
``l4_prune``, ``l5_prune``, (scene set), ``l2_compress``, ``index_rebuild``,
``l1_nodes``, ``l1_hyperedges``, ``l1_rebuild``, ``l1_decay``, ``l0_distill``.
Statuses: ``ok``, ``skipped`` (distillation with no samples), ``cancelled``,
``error``. The two sweeps are best effort (a failure is reported, the pass
goes on); a later stage's failure ends the pass, which returns the report
with the error.

Contract:
- **No model call under the domain lock** (beyond upstream). A stage
  snapshots what it needs under ``env.hold()``, releases the lock, asks the
  model, and re-takes the lock to re-validate and write: a group lands only
  if its members still equal the rows the model was shown (so they are
  unparented depth-1 rows of that scene) and its parent id is still free;
  otherwise it counts as unusable. Distillation merges into the profile as
  stored at write-back time. A turn on the same domain runs while the model
  thinks.
- **No re-asking a model that declined** (beyond upstream): per scene, the
  listing (and floor) a consolidation was declined on is remembered in the
  domain context; the scene is skipped without a call until its surface
  changes. The memory is in memory only (a reopen forgets it).
- Group validation: upstream's rules plus two it only asked the model for
  (members adjacent in the listing, no id twice); see ``validate``.
- Deterministic: scenes, nodes, pairs and edges are visited in ascending id
  order, so two passes over copies of one file (same clock, same model
  answers) write the same association layer.
- Dream keeps the domain's mirrors current after each write it makes (a turn
  can run between two stages). The structure stages cost what changed since
  the last pass (``l1cache``): ``index_rebuild`` decodes only topics whose
  frames moved and installs a rebuilt mirror only when the records disagree
  with it; ``l1_nodes``/``l1_hyperedges`` visit changed scenes and pairs with
  a changed end; ``l1_rebuild`` judges nodes whose topics changed; decay
  looks only at the nodes and edges whose value crosses a threshold by now
  (each is scheduled for that moment) and stores a value only with such a
  decision. A node whose edge list only grew is stored once it has grown by
  half (``L1Cache.link``); ``flush`` stores the rest (the root calls it at a
  close, a checkpoint, and before ``list_l1``).
- **No O(domain) work under the domain lock on a cold cache** (the first
  pass after an open; beyond upstream): its reads of every topic, node and
  edge (``L1Cache.preloaded``) and its weighing of every pair
  (``hyperedges.weigh_cold``) are made before the stage takes the lock, and
  checked under it (by frame offset, by keyword-set identity, and by the
  count of stages begun since), so turns go on meanwhile.
- Cancellation: ``env.cancel`` is checked at every stage boundary (the stage
  about to run is recorded ``cancelled``) and handed to every model call;
  the error is ``OperationCancelledError`` (5008).

Traps: a ``Held`` view is valid only inside its ``with``; never carry a
topic snapshot into a write without the re-check in ``compress``.
"""

from __future__ import annotations

from memhop.dream.env import HOLD_S, AnyEvent, DreamEnv, Held
from memhop.dream.l1domain import flush, rebase
from memhop.dream.pipeline import run_dream
from memhop.dream.report import STAGES, DreamReport, DreamStage

__all__ = [
    "HOLD_S",
    "STAGES",
    "AnyEvent",
    "DreamEnv",
    "DreamReport",
    "DreamStage",
    "Held",
    "flush",
    "rebase",
    "run_dream",
]
