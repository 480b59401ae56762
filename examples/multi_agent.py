"""Several agents, one ``.meh`` file: a domain each, and one knowledge graph they share.

A lead agent (the file's primary domain) plans a trip and hands work to two
sub-agents, ``researcher`` and ``booker``. Each sub-agent is its own domain:
its turns, lines, events, plans and profile are its own, and no other domain
reads them. The L3 knowledge graph is the one thing every domain of the file
shares: the researcher imports what it found, the booker queries it.

Then the file is closed and reopened, as a new process would, and the booker is
reached again by the id ``Session.agent_id`` gave (``DB.agent``).

The model is ``memhop.LocalModel()`` (offline, deterministic). Run:
``python examples/multi_agent.py [--path FILE]`` (default: a temporary file).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence

import memhop

T0 = 1_767_225_600_000  # 2026-01-01 00:00 UTC, in milliseconds
MINUTE = 60_000


def turn(session: memhop.Session, at: int, said: str, answered: str, *facts: str) -> None:
    """One turn of ``session``: open it, record each fact as an event, close it."""
    session.search()
    for fact in facts:
        session.append_archive(
            kind=memhop.ArchiveKind.EVENT, event_type="finding", content=fact, created_at=at
        )
    session.update(input=said, output=answered, created_at=at)


def run(path: str) -> int:
    llm = memhop.LocalModel()
    lead_profile = memhop.ProfileInput(name="Lead", role="plans the trip and delegates")
    with memhop.open(path, llm, profile=lead_profile) as db:
        lead = db.primary()
        researcher = db.sub_agent(llm, memhop.ProfileInput(name="researcher", role="finds facts"))
        booker = db.sub_agent(llm, memhop.ProfileInput(name="booker", role="books travel"))
        booker_id = booker.agent_id

        print("=== domains in one file (db.agents()) ===")
        for agent in db.agents():
            kind = "primary" if agent.primary else "sub-agent"
            print(f"{agent.id}  {agent.name:<10}  {kind}")

        # Each agent talks in its own domain.
        turn(lead, T0, "Plan a weekend in Lisbon for the team", "I'll ask researcher and booker")
        turn(
            researcher,
            T0 + MINUTE,
            "What should the team see in Lisbon?",
            "Belem tower and the Alfama district; tram 28 links them",
            "Belem tower opens at 10:00",
            "Tram 28 crosses Alfama",
        )
        turn(
            booker,
            T0 + 2 * MINUTE,
            "Book rooms near Alfama for four people",
            "Two double rooms held at Casa Alfama, Friday to Sunday",
        )

        # The shared graph: the researcher imports, every domain of the file can read it.
        imported = researcher.import_l3(
            [
                memhop.L3ImportItem(
                    title="Belem tower",
                    domain="lisbon-trip",
                    node_type="sight",
                    content="Opens at 10:00; closed on Mondays",
                    keywords=("belem", "tower"),
                ),
                memhop.L3ImportItem(
                    title="Alfama",
                    domain="lisbon-trip",
                    node_type="district",
                    content="Old town; tram 28 crosses it",
                    keywords=("alfama", "tram 28"),
                    related=(memhop.L3Relation(titles=("Belem tower",)),),
                ),
            ],
            memhop.L3ImportMode.MERGE,
        )
        graph_id = imported.graph_ids[0]
        print()
        print(f"=== the shared graph (researcher.import_l3 -> graph {graph_id}) ===")
        print(f"nodes created: {len(imported.created_ids)}, edges: {imported.edges_created}")

        # Privacy between domains: each sees only its own lines and events ...
        print()
        print("=== what each domain can search (search_l4(keyword='Alfama')) ===")
        for name, session in (("lead", lead), ("researcher", researcher), ("booker", booker)):
            found = session.search_l4(keyword="Alfama")
            texts = "; ".join(slot.content for slot in found) or "(nothing)"
            print(f"{name:<10} {len(found)} line(s): {texts}")

        # ... but the graph is the file's: the booker reads what the researcher imported.
        print()
        print("=== the booker queries the researcher's graph (query_l3_nodes) ===")
        for node in booker.query_l3_nodes(graph_id, keyword="alfama"):
            print(f"{node.title} ({node.node_type}): {node.content}")
        alfama = booker.query_l3_nodes(graph_id, keyword="alfama")[0]
        reached = booker.query_l3_subgraph(graph_id, alfama.id, max_depth=1)
        print(f"one hop from Alfama: {sorted(n.title for n in reached.nodes)}")

        usage = db.stats().model_usage
        print()
        print("=== model calls per domain in this process (db.stats().model_usage) ===")
        for agent in db.agents():
            print(f"{agent.name:<10} {usage[agent.id].calls}")

    # A new process: reopen and reach the booker again by its id.
    with memhop.open(path, llm) as db:
        booker = db.agent(llm, booker_id)
        context = booker.scene_context()
        print()
        print(f"=== after reopen: db.agent(llm, {booker_id!r}).scene_context() ===")
        for row in context.topics:
            print(" / ".join(m.content for m in row.messages))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--path", help="the .meh file to create (must not exist)")
    args = parser.parse_args(argv)
    if args.path:
        if os.path.exists(args.path):
            parser.error(f"{args.path} exists; give a new path")
        return run(args.path)
    with tempfile.TemporaryDirectory(prefix="memhop-multi-agent-") as tmp:
        return run(os.path.join(tmp, "team.meh"))


if __name__ == "__main__":
    sys.exit(main())
