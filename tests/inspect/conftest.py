"""A small memory file written through the public API, and the ids the library returned for it.

Built once per session (a few dozen records, well under a second); each test
gets its own copy, so fault injection in one never reaches another.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import memhop

TS = 1_700_000_000_000
DEMO_DEFAULTS = memhop.Defaults(scene_dream_topic_threshold=4, dream_compress_min_topics=4)


@dataclass(frozen=True)
class Demo:
    """Where the demo file is and what the library answered while writing it."""

    path: str
    scene_id: str  # the primary's scene (6 turns, one event, one plan step, one Dream pass)
    turn_ids: tuple[str, ...]  # what update() returned, in order
    event_text: str
    plan_title: str
    sub_id: str  # the sub-agent "scout"
    sub_turn_id: str
    graph_id: str
    dream_rows: tuple[memhop.TopicSlot, ...]  # search()'s rows with origin "dream" after Dream


def write_demo(path: str) -> Demo:
    """Write the demo memory at ``path`` through the public API only."""
    turn_ids = []
    with memhop.open(
        path,
        memhop.LocalModel(),
        defaults=DEMO_DEFAULTS,
        profile=memhop.ProfileInput(name="Ada", role="gardener"),
    ) as db:
        me = db.primary()
        scene_id = ""
        for i in range(6):
            opened = me.search(new_scene=i == 0)
            scene_id = opened.scene.scene_id
            if i == 1:
                me.append_archive(
                    content="watered <bed> 1",
                    created_at=TS + 1000 * i,
                    kind=memhop.ArchiveKind.EVENT,
                    event_type="tool",
                )
                me.plan_node_add(0, "plant the tulips")
            row = me.update(
                input=f"we planted roses in bed {i}",
                output=f"roses need water {i}",
                created_at=TS + 1000 * i,
            )
            turn_ids.append(row.id)
        me.dream()
        after = me.search()
        dream_rows = tuple(t for t in after.topics if t.origin == "dream")
        me.update(input="any news?", output="the roses bloomed", created_at=TS + 9000)
        sub = db.sub_agent(memhop.LocalModel(), memhop.ProfileInput(name="scout"))
        sub.search(new_scene=True)
        sub_turn = sub.update(input="scout reports aphids", output="noted", created_at=TS + 10_000)
        rose = memhop.L3ImportItem(title="Rose", domain="garden", keywords=["rose"])
        imported = me.import_l3([rose], memhop.L3ImportMode.SKIP)
        graph_id = imported.graph_ids[0]
    return Demo(
        path,
        scene_id,
        tuple(turn_ids),
        "watered <bed> 1",
        "plant the tulips",
        sub.agent_id,
        sub_turn.id,
        graph_id,
        dream_rows,
    )


@pytest.fixture(scope="session")
def demo_master(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return write_demo(str(tmp_path_factory.mktemp("demo") / "master.meh"))


@pytest.fixture
def demo(demo_master: Demo, tmp_path: Path) -> Demo:
    """A private copy of the demo file (same ids), safe to damage."""
    path = str(tmp_path / "demo.meh")
    shutil.copyfile(demo_master.path, path)
    return Demo(path, *[getattr(demo_master, f) for f in list(Demo.__dataclass_fields__)[1:]])


def signature(path: str) -> tuple[bytes, int, int]:
    """The file's bytes, size and mtime (ns): what "unchanged" means here."""
    with open(path, "rb") as handle:
        data = handle.read()
    stat = os.stat(path)
    return data, stat.st_size, stat.st_mtime_ns
