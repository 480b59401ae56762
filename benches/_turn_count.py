"""The turn loop of ``benches/turn.py`` alone, for an instruction count under cachegrind.

``python benches/_turn_count.py STORE N`` runs N turns of one store and exits:
``memhop`` (fsync a no-op), ``sqlite`` (the in-memory table) or ``model`` (the
``LocalModel`` keyword call alone, which both stores make). ``turn.py`` runs it under
cachegrind, where valgrind is installed, with N = 0 and N = the turns measured, so the
difference is the turns' own instructions: a count that does not move with the
machine's hour, unlike time.
"""

from __future__ import annotations

import os
import sys
import tempfile

from _common import fsync_off
from turn import BASE_MS, NO_AUTO_DREAM, TURNS_PER_SCENE, SqliteTurns, load_lines, memhop_turn

import memhop


def run(store: str, turns: int) -> None:
    lines = load_lines()
    if store == "sqlite":
        table = SqliteTurns(memhop.LocalModel())
        for i in range(turns):
            said, answered = lines[i % len(lines)]
            table.turn(said, answered, BASE_MS + i * 1000, new_scene=i % TURNS_PER_SCENE == 0)
    elif store == "model":
        model = memhop.LocalModel()
        for i in range(turns):
            said, answered = lines[i % len(lines)]
            model.extract_keywords(f"User: {said}\nAssistant: {answered}")
    elif store == "memhop":
        profile = memhop.ProfileInput(name="bench agent")
        with tempfile.TemporaryDirectory(prefix="memhop-count-") as tmp, fsync_off():
            path = os.path.join(tmp, "turns.meh")
            with memhop.open(path, memhop.LocalModel(), NO_AUTO_DREAM, profile) as db:
                session = db.primary()
                for i in range(turns):
                    said, answered = lines[i % len(lines)]
                    at = BASE_MS + i * 1000
                    memhop_turn(session, said, answered, at, new_scene=i % TURNS_PER_SCENE == 0)
    else:
        raise SystemExit(f"unknown store {store!r}: memhop, sqlite or model")


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]))
