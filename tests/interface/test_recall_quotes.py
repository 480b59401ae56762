"""A Dream row's recall answer quotes the first three folded lines that hold a query word."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import memhop
from tests.interface.conftest import TS, open_new

SAID = ["harbor one", "nothing here", "harbor three", "harbor four", "harbor five", "nothing"]


class FoldAll(memhop.LocalModel):
    """LocalModel's keywords; consolidation folds every row it is shown into one."""

    def consolidate(
        self, topics: Sequence[Any], floor: int, *, cancel: threading.Event | None = None
    ) -> Any:
        if len(topics) < 2:
            return ()
        ids = tuple(t.id for t in topics)
        return (memhop.llm.Group(member_ids=ids, summary="a day of boats at the quay"),)


def test_a_dream_row_quotes_its_first_three_matching_lines_in_order(meh_path: str) -> None:
    defaults = memhop.Defaults(
        scene_dream_topic_threshold=-1, dream_compress_min_topics=2, settled_scene_floor=-1
    )
    with open_new(meh_path, FoldAll(), defaults=defaults) as db:
        me = db.primary()
        for i, said in enumerate(SAID):
            me.search()
            me.update(input=said, output="noted", created_at=TS + i)
        report = me.dream()
        assert report.consolidated_scenes == 1  # control: the six turns are one Dream row
        (hit,) = [h for h in me.recall("harbor", limit=10) if h.origin == "dream"]
        lines = hit.text.split("\n")
        assert lines[0] == "a day of boats at the quay"  # the row's own line first
        # the first three that hold the word, in the turns' order: not "nothing here",
        # and not "harbor five", which holds it past the third
        assert lines[1:] == ["harbor one", "harbor three", "harbor four"]
