"""An install without a C compiler: the same memory, through the public API.

memhop's compiled parts (the ranking kernel, the id maps' core, the payload writers, the
frame encoder, the content mirror's row store) each stand in for Python code that gives
the same answers; their own tests compare them part by part. This test runs one short
session twice in fresh interpreters, once with every compiled part hidden from the import
(as where none was built), and compares what a host sees: the turns' keywords and lines,
a recall's hits, the records the file holds, and a fresh open of each file by the other's
code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

COMPILED_PARTS = (
    "memhop.index._bm25",
    "memhop.intmap._core",
    "memhop.records._json",
    "memhop._slots",
    "memhop.engine._frames",
    "memhop._ids",
    "memhop.index._rows",
)

SESSION = """
import json, sys
if sys.argv[2] == "pure":
    for part in {parts!r}:
        sys.modules[part] = None
import memhop

path, mode, reopen = sys.argv[1], sys.argv[2], sys.argv[3]
quiet = memhop.Defaults(scene_dream_topic_threshold=-1)
seen = {{}}
if reopen == "no":
    with memhop.open(path, memhop.LocalModel(), quiet, memhop.ProfileInput(name="a")) as db:
        me = db.primary()
        for i in range(30):
            at = 1_700_000_000_000 + i
            me.search(new_scene=i % 10 == 0)
            me.append_archive(
                kind=memhop.ArchiveKind.EVENT, event_type="tool_call", created_at=at,
                content=f'lookup("dog {{i}}") <&> caf\\u00e9 \\u2028',
            )
            me.update(input=f"My dog {{i}} likes the lake", output=f"Noted: walk {{i}}\\n",
                      created_at=at)
with memhop.open(path, memhop.LocalModel(), quiet) as db:
    me = db.primary()
    seen["records"] = db.stats().record_count
    seen["hits"] = [[hit.text, hit.score] for hit in me.recall("dog lake walk", limit=5)]
    seen["events"] = [[hit.text, hit.event_type] for hit in me.recall("lookup", limit=3)]
    context = me.scene_context(me.search().scene.scene_id)
    seen["keywords"] = [list(t.keywords) for t in context.topics]
    seen["lines"] = [[m.content for m in t.messages] for t in context.topics]
seen["loaded"] = sorted(p for p in {parts!r} if sys.modules.get(p) is not None)
print(json.dumps(seen))
"""


def _run(tmp: Path, name: str, mode: str, reopen: str) -> dict[str, object]:
    script = tmp / "session.py"
    script.write_text(SESSION.format(parts=COMPILED_PARTS), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(tmp / name), mode, reopen],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, object] = json.loads(done.stdout)
    return seen


def test_a_session_without_the_compiled_parts_sees_the_same_memory(tmp_path: Path) -> None:
    compiled = _run(tmp_path, "compiled.meh", "compiled", "no")
    pure = _run(tmp_path, "pure.meh", "pure", "no")
    assert pure.pop("loaded") == []  # none of them ran in the second
    loaded = compiled.pop("loaded")  # every part this install built
    if os.environ.get("MEMHOP_REQUIRE_KERNEL") == "1":  # CI builds every one
        assert loaded == sorted(COMPILED_PARTS)
    assert compiled == pure
    assert compiled["hits"]  # a positive control: the comparison is of real answers
    assert compiled["keywords"]
    assert compiled["lines"]
    assert compiled["events"]
    assert isinstance(compiled["records"], int)
    assert compiled["records"] > 90
    # Each file read back by the other's code: the same answers again.
    again = [
        _run(tmp_path, "compiled.meh", "pure", "yes"),
        _run(tmp_path, "pure.meh", "compiled", "yes"),
    ]
    for seen in again:
        seen.pop("loaded")
    assert again[0] == again[1] == compiled
