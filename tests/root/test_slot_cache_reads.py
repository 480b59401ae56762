"""The slot cache keeps what a read decoded, never what a turn wrote (nobody may read it)."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import memhop
from memhop.layers import archive

TS = 1_700_000_000_000


def test_turns_keep_nothing_decoded_and_a_scene_read_keeps_its_lines(tmp_path: Path) -> None:
    defaults = memhop.Defaults(scene_dream_topic_threshold=-1)
    path = str(tmp_path / "mem.meh")
    with memhop.open(path, memhop.LocalModel(), defaults, memhop.ProfileInput(name="me")) as db:
        me = db.primary()
        for i in range(4):
            me.search()
            me.append_archive(
                kind=memhop.ArchiveKind.EVENT, event_type="tool", content=f"call {i}", created_at=TS
            )
            me.update(input=f"turn {i}", output=f"reply {i}", created_at=TS + i)
        ctx = db._root._contexts[0]
        assert len(ctx.slots) == 0  # twelve slots written, none kept
        first = me.scene_context()
        lines = [m.content for row in first.topics for m in row.messages]
        assert len(lines) == 8  # the control: the lines are there to read, and were decoded
        assert len(ctx.slots) == 8  # the read kept them
        with mock.patch.object(archive, "read_contents") as reader:
            assert me.scene_context() == first
            reader.assert_not_called()  # a second read decodes nothing
