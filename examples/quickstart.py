"""Quickstart: write, delete, checkpoint, reopen and compact a .meh file with the engine.

This exercises the storage engine directly until the turn loop lands.
"""

from __future__ import annotations

import os
import tempfile

from memhop.engine import compact_to, create_engine, open_engine


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "agent.meh")
        engine = create_engine(path)
        engine.write(0, 0x08, 1, b'{"content":"I moved to Lisbon last spring."}')
        engine.write(0, 0x08, 2, b'{"content":"my passport number is X1234567"}')
        engine.delete(0, 2)
        engine.close()

        engine = open_engine(path)
        print("live records:", engine.stats()[1], "file bytes:", engine.stats()[0])
        print("record 1:", engine.read(0, 1).payload.decode())
        compacted = os.path.join(tmp, "agent.compact.meh")
        compact_to(engine, compacted)
        engine.close()
        with open(path, "rb") as f:
            print("deleted text still in original:", b"X1234567" in f.read())
        with open(compacted, "rb") as f:
            print("deleted text in compacted copy:", b"X1234567" in f.read())


if __name__ == "__main__":
    main()
