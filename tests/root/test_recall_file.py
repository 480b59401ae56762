"""The recall file from inside: a warm domain recalls before its build ends, and the saved
state is taken over by the build; the packed state reads back what was packed."""

from __future__ import annotations

import threading
import time
from array import array
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import memhop
from memhop.domain.recall_file import RecallFile
from memhop.domain.recall_sections import decode_sections, encode_sections
from memhop.engine import create_engine
from memhop.engine import seed as seed_module
from memhop.index.grouped import Grouped
from memhop.index.journal import Journal
from memhop.index.recall import RecallIndex
from memhop.index.recall_state import RecallState, order_ids, packed_order
from memhop.index.recall_terms import Terms
from memhop.index.split_column import SplitColumn
from tests.root.recall_files import T0, TABLE, WORDS, answers, written


def test_a_warm_domain_recalls_before_its_build_and_the_build_takes_the_state_over(
    tmp_path: Path, held_builds: threading.Event
) -> None:
    path = str(tmp_path / "mem.meh")
    written(path, 12)
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        expected = answers(db.primary())
    held_builds.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search()  # warm: the scene map serves it, the build waits at the gate
        ctx = db._root._contexts[0]
        assert ctx.built is None
        assert ctx.warm is not None
        assert answers(me) == expected  # answered with the build still held
        me.update(input="a heron on the pier at dawn", output="herons", created_at=T0 + 99)
        warm_hits = me.recall("heron dawn", limit=2)
        assert warm_hits[0].text.startswith("a heron on the pier")
        assert ctx.built is None  # still warm: the views took the turn, recall saw it
        assert ctx.warm is not None
        taken = ctx.warm.recall
        assert taken is not None
        held_builds.set()
        me.list_scenes()  # a whole-domain call waits for the build, which takes the state
        assert ctx.built is not None
        assert ctx.built.recall is taken
        me.update(input="a second heron", output="two herons now", created_at=T0 + 100)
        after = [me.recall("heron dawn", limit=2), *answers(me)]
    for side in (".recall", ".scenemap"):
        Path(path + side).unlink()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:  # control: the records alone
        me = db.primary()
        assert [me.recall("heron dawn", limit=2), *answers(me)] == after


def test_turns_after_the_last_warm_recall_are_redone_once_the_build_takes_over(
    tmp_path: Path, held_builds: threading.Event
) -> None:
    """The build's thread takes the turns the views took before the hold that adopts it
    (``WarmStart.left``): those the warm recall state had not read yet are still redone by
    the next recall, as an index of the records alone has them."""
    path = str(tmp_path / "mem.meh")
    written(path, 12)
    held_builds.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search()
        ctx = db._root._contexts[0]
        answers(me)  # the warm state taken, and a view of every scene
        warm = ctx.warm
        assert warm is not None
        me.update(input="a heron on the pier at dawn", output="herons", created_at=T0 + 99)
        held_builds.set()  # the warm state has not read that turn: its view noted it
        for _ in range(400):  # the build runs on a thread of its own
            if warm.result() is not None:
                break
            time.sleep(0.05)
        assert warm.left() == []  # the build's thread took the turn, not the adopting hold
        hits = me.recall("heron dawn", limit=2)
        assert ctx.built is not None  # the recall took the build over
        assert hits[0].text.startswith("a heron on the pier")
        after = [hits, *answers(me)]
    for side in (".recall", ".scenemap"):
        Path(path + side).unlink()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:  # control: the records alone
        me = db.primary()
        assert [me.recall("heron dawn", limit=2), *answers(me)] == after


def test_a_warm_recall_takes_the_finished_build_and_reads_only_views_that_changed(
    tmp_path: Path, held_builds: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "mem.meh")
    written(path, 12)
    held_builds.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:  # Dream off: nothing else takes it
        me = db.primary()
        me.search()
        ctx = db._root._contexts[0]
        answers(me)  # every word's rows: a view of every scene
        warm = ctx.warm
        assert warm is not None
        me.update(input="a heron on the pier at dawn", output="herons", created_at=T0 + 99)
        drained: list[Journal] = []
        real_drain = Journal.drain

        def counted(journal: Journal) -> set[int]:
            drained.append(journal)
            return real_drain(journal)

        monkeypatch.setattr(Journal, "drain", counted)
        assert me.recall("heron dawn", limit=1)[0].text.startswith("a heron on the pier")
        assert ctx.built is None  # still warm: the build waits at its gate
        assert len(drained) == 2  # the one view the turn changed, its two journals (of 4 views)
        held_builds.set()
        for _ in range(400):  # the build runs on a thread of its own
            if warm.result() is not None:
                break
            time.sleep(0.05)
        hits = me.recall("heron dawn", limit=1)
        assert hits[0].text.startswith("a heron on the pier")  # the same answer, built
        assert ctx.built is not None  # taken by the recall: no Dream pass, no call waited
        assert ctx.warm is None


def test_the_saved_state_spares_the_first_recall_every_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the file, the first recall cuts no line into terms (only its queries); without it,
    every line."""
    path = str(tmp_path / "mem.meh")
    written(path, 12)
    cut: list[str] = []
    real = Terms.of

    def counted(self: Terms, text: str) -> list[str]:
        if text not in WORDS:  # the queries are cut either way
            cut.append(text)
        return real(self, text)

    monkeypatch.setattr(Terms, "of", counted)
    Path(path + ".scenemap").unlink()  # built in full at the first call, both times
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        saved = answers(db.primary())
    assert cut == []
    Path(path + ".recall").unlink()
    Path(path + ".scenemap").unlink()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        assert answers(db.primary()) == saved
    assert len(cut) > 12  # control: every row's keywords and lines were cut


_DOCS = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.integers(1, 40),
        st.integers(0, 5),
        st.lists(st.sampled_from(["a", "bé", "c", "", "dd", "ee", "f"]), max_size=12),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(docs=_DOCS, removed=st.lists(st.integers(1, 40), max_size=20))
def test_a_packed_state_reads_back_what_was_packed(
    docs: list[tuple[int, int, int, list[str]]], removed: list[int]
) -> None:
    state = RecallState()
    twin = RecallIndex()  # the same documents, never packed (packing repacks in place)
    for index in (state.index, twin):
        for kind, doc_id, scene, terms in docs:
            index.put((kind, doc_id), scene, doc_id * 7, terms)
        for doc_id in removed:
            index.remove((doc_id % 2, doc_id))
    state.row_of = {d: d + 1 for _, d, _, _ in docs[:5]}
    state.members = {d: (d, d + 2) for _, d, _, _ in docs[:3]}
    state.events = {d: d if d % 2 else (d, d + 1) for _, d, _, _ in docs[:4]}
    state.orders = {scene: packed_order([d, 2**64 - 1 - d]) for _, d, scene, _ in docs[:4]}
    searched = [state.index.search([t], 5) for t in ["a", "bé", "dd", "zz"]]
    data = b"".join(encode_sections([(7, 8192, 3, b"d" * 16, state)]))
    back = decode_sections(data)[7].state()
    assert back.index == twin
    assert [back.index.search([t], 5) for t in ["a", "bé", "dd", "zz"]] == searched
    assert (back.row_of, back.members, back.events) == (state.row_of, state.members, state.events)
    assert dict(back.orders) == state.orders
    assert {k: order_ids(v) for k, v in back.orders.items()} == {
        scene: [d, 2**64 - 1 - d] for _, d, scene, _ in docs[:4]
    }
    # Both go on alike: a document put after the load ranks the same in each.
    for index in (twin, back.index):
        index.put((0, 999), 1, 1, ["a", "new"])
    assert back.index.search(["a", "new"], 3) == twin.search(["a", "new"], 3)
    assert back.index == twin


@given(at=st.integers(0, 10_000), flip=st.integers(1, 255))
@example(at=12, flip=1)  # the directory's count 1 -> 0: read once as a file of no domain
@example(at=12, flip=3)  # 1 -> 2: the body read as a second entry
@settings(max_examples=60, deadline=None)
def test_a_flipped_byte_is_refused_never_read_as_another_state(at: int, flip: int) -> None:
    state = RecallState()
    for i in range(30):
        state.index.put((0, i + 1), 1, i, [f"w{i % 7}", "common"])
    data = bytearray(b"".join(encode_sections([(7, 8192, 3, b"d" * 16, state)])))
    assert decode_sections(bytes(data))[7].state().index == state.index  # control: it reads
    data[at % len(data)] ^= flip
    try:
        read = [s.state() for s in decode_sections(bytes(data)).values()]
    except ValueError as exc:  # refused: what the root does is index in full
        refusal = str(exc)
        read = []
    else:
        refusal = ""
    assert bool(read) != bool(refusal)
    assert not refusal or refusal.startswith("recall")  # named: the file, not a crash
    # A flip in the directory's agent id, end, seal or digest leaves the body whole; the
    # root's trust rule refuses what no longer matches the file. The body itself is whole.
    assert all(r.index == state.index for r in read)


@settings(max_examples=100, deadline=None)
@given(
    packed=st.dictionaries(st.integers(0, 30), st.lists(st.integers(0, 9), max_size=3)),
    ops=st.lists(
        st.tuples(st.sampled_from(["get", "set", "del", "pop", "in"]), st.integers(0, 30)),
        max_size=40,
    ),
)
def test_grouped_columns_behave_as_the_dict_they_were_packed_from(
    packed: dict[int, list[int]], ops: list[tuple[str, int]]
) -> None:
    """The lazily read maps of a state read back (members, events, orders) are dicts."""
    keys = sorted(packed)
    ends, flat, total = array("Q"), array("Q"), 0
    for key in keys:
        flat.extend(packed[key])
        total += len(packed[key])
        ends.append(total)
    lazy = Grouped(array("Q", keys), ends, flat, tuple)
    plain = {k: tuple(v) for k, v in packed.items()}
    for op, key in ops:
        if op == "get":
            assert lazy.get(key) == plain.get(key)
        elif op == "set":
            lazy[key] = plain[key] = (key,)
        elif op == "del" and key in plain:
            del lazy[key], plain[key]
        elif op == "pop":
            assert lazy.pop(key, None) == plain.pop(key, None)
        else:
            assert (key in lazy) == (key in plain)
    assert dict(lazy) == plain
    assert len(lazy) == len(plain)


def test_ids_past_two_bytes_are_held_wide_and_read_back() -> None:
    """Term ids and slots start in two bytes; past 65,535 they widen, before and after a load."""
    state = RecallState()
    many = [f"t{i}" for i in range(66_000)]
    state.index.put((0, 1), 1, 1, many)  # term ids pass two bytes
    for i in range(66_000):  # and so do the slots
        state.index.put((1, i + 2), 2, i, ["common", many[i % 50]])
    assert state.index.search(["t65999"], 1)[0].key == (0, 1)
    assert state.index.search(["t49"], 1)[0].key == (1, 66_001)  # the newest: slot 66,001
    back = decode_sections(b"".join(encode_sections([(7, 8192, 0, b"d" * 16, state)])))[7]
    loaded = back.state()
    assert loaded.index == state.index
    for index in (state.index, loaded.index):
        index.put((1, 10**6), 3, 5, ["t65999", "fresh"])
    for query in (["t65999"], ["fresh", "common"], ["t3"]):
        assert loaded.index.search(query, 3) == state.index.search(query, 3)


def test_a_warm_first_recall_does_not_hash_the_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scene map the same close wrote was checked before the first write: the recall
    file, at the same end, is taken on its word. Control: without the map, it is hashed."""
    path = str(tmp_path / "mem.meh")
    written(path, 9)
    hashed: list[list[int]] = []
    digests = seed_module.prefix_digests

    def counted(view: bytes, ends: Sequence[int], last: int) -> list[bytes]:
        hashed.append(list(ends))  # each pass over the file's bytes
        return digests(view, ends, last)

    monkeypatch.setattr(seed_module, "prefix_digests", counted)
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search()
        me.update(input="violin after the open", output="noted", created_at=T0 + 50)
        assert me.recall("violin after the open", limit=1)[0].text.startswith("violin after")
        assert hashed == []
    Path(path + ".scenemap").unlink()
    hashed.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search()
        me.update(input="violin again", output="noted", created_at=T0 + 60)
        assert me.recall("violin again", limit=1)[0].text.startswith("violin again")
        assert len(hashed) == 1


def test_a_close_keeps_a_taken_section_it_has_no_fresh_state_for(tmp_path: Path) -> None:
    """A domain that took its section but saves no state this close (its build not done)
    keeps the section, still true for the file; the domain that saved is replaced."""
    path = str(tmp_path / "bare.meh")
    engine = create_engine(path)
    try:
        engine.write(1, 4, 99, b"x" * 64)
        states = {}
        for agent, word in ((1, "alpha"), (2, "beta")):
            states[agent] = RecallState()
            states[agent].index.put((0, agent), 1, 1, [word])
        first = RecallFile(path)
        first.save(engine, sorted(states.items()))
        again = RecallFile(path)
        taken = again.take(1)
        assert taken is not None
        assert again.take(1) is None  # once
        states[2].index.put((0, 7), 1, 2, ["gamma"])
        again.save(engine, [(2, states[2])])
        again.close()
        final = RecallFile(path)
        kept, saved = final.take(1), final.take(2)
        assert kept is not None
        assert saved is not None
        assert kept.section.state().index == states[1].index
        assert saved.section.state().index == states[2].index  # the fresh one
        final.deleted()
        assert not Path(path + ".recall").exists()
        assert RecallFile(path).take(2) is None  # control: gone with the file
    finally:
        engine.close()


def test_a_close_before_the_build_saves_the_state_the_views_kept(
    tmp_path: Path, held_builds: threading.Event
) -> None:
    """A session that ends before its domain's build saves the recall state it kept through
    the views, turns included: the next open does not redo them from the log."""
    path = str(tmp_path / "mem.meh")
    written(path, 9)
    before = Path(path + ".recall").read_bytes()
    held_builds.clear()
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        me.search()
        me.update(input="a kingfisher by the pier", output="bright blue", created_at=T0 + 70)
        assert me.recall("kingfisher")[0].text.startswith("a kingfisher")
        assert db._root._contexts[0].built is None  # still warm at the close
        held_builds.set()  # the close stops the build; the state is saved regardless
    after = Path(path + ".recall").read_bytes()
    assert after != before
    assert b"kingfisher" in after
    assert b"kingfisher" not in before  # control: the turn is in the state the close wrote


def _mapped(path: str) -> list[str]:
    """The process's mappings of ``path`` (Linux: /proc/self/maps), "(deleted)" kept."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return [line.split(None, 5)[-1].strip() for line in maps if path in line]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
def test_a_state_read_back_views_the_mapped_file_until_the_close(tmp_path: Path) -> None:
    path = str(tmp_path / "mem.meh")
    written(path, 12)
    recall_path = path + ".recall"
    assert _mapped(recall_path) == []  # control: nothing mapped between sessions
    with memhop.open(path, memhop.LocalModel(), TABLE) as db:
        me = db.primary()
        expected = me.recall("heron", limit=3)
        assert expected  # the saved state answers
        assert _mapped(recall_path) == [recall_path]  # its columns are the file's pages
        # A delete unlinks the file; the state still views the unlinked pages (no name
        # in the directory) and answers without what was deleted.
        me.delete_topic(expected[0].topic_id)
        assert not Path(recall_path).exists()
        assert _mapped(recall_path) == [f"{recall_path} (deleted)"]
        after = {h.topic_id for h in me.recall("heron", limit=20)}
        assert expected[0].topic_id not in after
        assert after  # control: other herons still answer (a row's document holds its
        # neighbours' lines, so which ones may move with the delete)
    assert _mapped(recall_path) == []  # the close let go of every view: unmapped
    assert Path(recall_path).exists()  # and wrote the file again, from memory


@settings(max_examples=60, deadline=None)
@given(
    base=st.lists(st.integers(0, 2**16 - 1), max_size=30),
    tail=st.lists(st.integers(0, 2**32 - 1), max_size=30),
    as_view=st.booleans(),
    probe=st.integers(0, 2**16 - 1),
)
def test_a_split_column_reads_as_one_list(
    base: list[int], tail: list[int], as_view: bool, probe: int
) -> None:
    raw = array("H", base)
    column = SplitColumn("H", memoryview(raw.tobytes()).cast("H") if as_view else raw)
    for value in tail:
        if value > 0xFFFF and column.tail.typecode == "H":
            column.widen("I")
        column.append(value)
    items = base + tail
    assert len(column) == len(items)
    assert list(column) == items
    assert [column[i] for i in range(len(items))] == items
    assert list(column.whole("I")) == items
    n = len(base)
    for a, b in ((0, n), (n, len(items)), (0, n // 2), (n + len(tail) // 2, len(items))):
        assert list(column.run(a, b)) == items[a:b]
        want = items[a:b].index(probe) + a if probe in items[a:b] else -1
        assert column.find(probe, a, b) == want
        if a < b:  # control: a value the run holds is found where it is
            assert column.find(items[b - 1], a, b) == items[a:b].index(items[b - 1]) + a


def test_a_view_is_searched_only_where_its_items_start() -> None:
    # 0x0100, 0x0001 are the bytes 00 01 01 00: 0x0101 lies across the two items.
    view = memoryview(array("H", [0x0100, 0x0001]).tobytes()).cast("H")
    column = SplitColumn("H", view)
    assert column.find(0x0101, 0, 2) == -1
    assert column.find(0x0001, 0, 2) == 1  # control: an item that is there is found
    assert column.find(-1, 0, 2) == column.find(1 << 20, 0, 2) == -1  # no such item fits


def test_a_split_column_takes_items_from_both_parts_in_the_order_asked() -> None:
    """``take`` reads positions in the file's part and the session's, in the order given,
    as item-by-item reads do (the control)."""
    column = SplitColumn("q", memoryview(array("q", [5, -6, 7]).tobytes()).cast("q"))
    for value in (8, -9):
        column.append(value)
    at = [4, 0, 3, 1, 1, 2]
    assert column.take(at) == [column[i] for i in at] == [-9, 5, 8, -6, -6, 7]
    assert column.take([3]) == [8]
    assert column.take([]) == []
