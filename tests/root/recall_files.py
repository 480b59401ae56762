"""A small domain written with a recall file beside it, and its answers: for the tests of
the recall file (``test_recall_file``, ``test_recall_stamps``)."""

from __future__ import annotations

import memhop

T0 = 1_700_000_000_000
TABLE = memhop.Defaults(scene_dream_topic_threshold=-1, compact_dead_ratio=0)
PROFILE = memhop.ProfileInput(name="me")
WORDS = ["violin", "orchard", "heron", "lake", "cider", "paint", "rain", "market", "pier"]


def written(path: str, turns: int) -> None:
    """``turns`` turns over ``WORDS``, a scene every three, recalled once: the close saves it."""
    with memhop.open(path, memhop.LocalModel(), TABLE, PROFILE) as db:
        me = db.primary()
        for i in range(turns):
            me.search(new_scene=i % 3 == 0)
            said = f"{WORDS[i % len(WORDS)]} and {WORDS[(i * 5 + 1) % len(WORDS)]} number {i}"
            me.update(input=said, output=f"noted {i}", created_at=T0 + i)
        me.recall("violin")


def answers(me: memhop.Session) -> list[list[tuple[str, float]]]:
    """The top four (topic, score) of a recall of each of ``WORDS``."""
    return [[(h.topic_id, round(h.score, 9)) for h in me.recall(w, limit=4)] for w in WORDS]
