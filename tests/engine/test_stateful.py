"""A stateful property: the engine agrees with a plain dict across writes, deletes and reopens."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memhop.engine import Engine, RecordEntry, compact_into, compact_to, create_engine, open_engine
from memhop.errors import NotFoundError

# Small domains so ids collide: overwrites, type changes and deletes of live ids happen often.
AGENT_IDS = (0, 1, 0x22)
RECORD_IDS = tuple(range(6))
RECORD_TYPES = (0x01, 0x02, 0x0F)

agents = st.sampled_from(AGENT_IDS)
record_ids = st.sampled_from(RECORD_IDS)
record_types = st.sampled_from(RECORD_TYPES)
payloads = st.binary(max_size=24)
entries = st.tuples(agents, record_types, record_ids, payloads)

Key = tuple[int, int]


class EngineVersusDict(RuleBasedStateMachine):
    """Drives one engine and a {(agent, id): (type, payload)} model with the same operations."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory(prefix="memhop-stateful-")
        self.files = 0
        self.engine: Engine = create_engine(self._fresh_path())
        self.model: dict[Key, tuple[int, bytes]] = {}

    def _fresh_path(self) -> str:
        self.files += 1
        return os.path.join(self.tmp.name, f"state-{self.files}.meh")

    # ---- rules ------------------------------------------------------------------------

    @rule(agent=agents, rec_type=record_types, ident=record_ids, payload=payloads)
    def write(self, agent: int, rec_type: int, ident: int, payload: bytes) -> None:
        offset = self.engine.write(agent, rec_type, ident, payload)
        assert offset == self.engine.offset_of(agent, ident)
        self.model[(agent, ident)] = (rec_type, payload)

    @rule(batch=st.lists(entries, max_size=6))
    def write_batch(self, batch: list[tuple[int, int, int, bytes]]) -> None:
        offsets = self.engine.write_batch([RecordEntry(a, t, i, p) for a, t, i, p in batch])
        assert len(offsets) == len(batch)
        assert offsets == sorted(offsets)
        for agent, rec_type, ident, payload in batch:  # later duplicates win
            self.model[(agent, ident)] = (rec_type, payload)

    @rule(agent=agents, ident=record_ids)
    def delete(self, agent: int, ident: int) -> None:
        assert self.engine.delete(agent, ident) == ((agent, ident) in self.model)
        self.model.pop((agent, ident), None)

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def delete_a_live_record(self, data: st.DataObject) -> None:
        agent, ident = data.draw(st.sampled_from(sorted(self.model)), label="live key")
        assert self.engine.delete(agent, ident) is True
        del self.model[(agent, ident)]

    @rule(agent=agents, idents=st.lists(record_ids, max_size=5))
    def delete_batch(self, agent: int, idents: list[int]) -> None:
        # Upstream counts every listed id that is live, a repeated one once per mention (§8).
        expected = sum((agent, ident) in self.model for ident in idents)
        assert self.engine.delete_batch(agent, idents) == expected
        for ident in idents:
            self.model.pop((agent, ident), None)

    @rule()
    def checkpoint(self) -> None:
        self.engine.checkpoint()
        assert self.engine.headers.current.snapshot_offset != 0

    @rule()
    def reopen(self) -> None:
        self.engine.close()
        self.engine = open_engine(self.engine.path)
        assert self.engine.headers.current.snapshot_offset != 0  # close checkpointed

    @rule()
    def reopen_without_checkpoint(self) -> None:
        self.engine.close_without_checkpoint()
        self.engine = open_engine(self.engine.path)

    @rule(keep_open=st.booleans())
    def compact(self, keep_open: bool) -> None:
        source, new_path = self.engine, self._fresh_path()
        if keep_open:
            copy = compact_into(source, new_path)
        else:
            compact_to(source, new_path)
            copy = open_engine(new_path)
        source.close()
        self.engine = copy
        assert copy.headers.current.snapshot_offset != 0

    # ---- invariants and teardown ------------------------------------------------------

    @invariant()
    def engine_matches_model(self) -> None:
        engine, model = self.engine, self.model
        assert engine.stats()[1] == len(model)
        assert engine.agents() == sorted({agent for agent, _ in model})
        for agent in AGENT_IDS:
            for ident in RECORD_IDS:
                if (agent, ident) in model:
                    frame = engine.read(agent, ident)
                    assert (frame.rec_type, frame.payload) == model[(agent, ident)]
                    assert engine.contains(agent, ident)
                else:
                    assert not engine.contains(agent, ident)
                    with pytest.raises(NotFoundError):
                        engine.read(agent, ident)
            for rec_type in RECORD_TYPES:
                expected = sorted(
                    i for (a, i), (t, _) in model.items() if a == agent and t == rec_type
                )
                assert engine.ids_of_type(agent, rec_type) == expected
                # A recurring question's kept answer, current after every rule since the
                # first (types moving between kept and unkept ones, deletes, reopens).
                if rec_type != RECORD_TYPES[1]:
                    assert engine.ids_of_type(agent, rec_type, recurring=True) == expected

    def teardown(self) -> None:
        try:
            if not self.engine.closed:
                self.engine.close()
        finally:
            self.tmp.cleanup()


def test_engine_agrees_with_a_dict_model_over_random_operations() -> None:
    """Any run of writes, deletes, checkpoints, reopens and compactions keeps engine == model."""
    run_state_machine_as_test(EngineVersusDict, settings=settings(stateful_step_count=30))
