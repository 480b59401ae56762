"""A recall takes one hold of its domain's lock once the index is built: each hold is a
place where the host's call can wait behind Dream's, so a recall makes no more of them
than a turn's other calls do."""

from __future__ import annotations

from pathlib import Path

import pytest

import memhop
from memhop.root.root import Root

NO_DREAM = memhop.Defaults(scene_dream_topic_threshold=-1)


def test_a_built_domains_recall_takes_one_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = memhop.ProfileInput(name="Mel")
    with memhop.open(str(tmp_path / "a.meh"), memhop.LocalModel(), NO_DREAM, profile) as db:
        me = db.primary()
        me.search(new_scene=True)
        me.update(
            input="We sailed the ferry to Oslo at noon",
            output="Lovely trip",
            created_at=1_683_554_160_000,
        )
        holds: list[int] = []
        real = Root.domain

        def counted(self: Root, agent_id: int, **kwargs: bool):  # type: ignore[no-untyped-def]
            holds.append(agent_id)
            return real(self, agent_id, **kwargs)

        monkeypatch.setattr(Root, "domain", counted)
        first = me.recall("ferry to Oslo")  # builds the index: a step a hold, then the answer
        assert first
        assert "ferry" in first[0].text
        built = len(holds)
        holds.clear()
        again = me.recall("ferry to Oslo")
        assert [h.topic_id for h in again] == [h.topic_id for h in first]
        assert len(holds) == 1
        assert built > 1  # control: the first recall built the index in holds of its own
