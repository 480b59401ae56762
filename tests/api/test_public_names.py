"""The public surface changes only on purpose."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

import memhop
import memhop.api
import memhop.inspection

EXPECTED = {
    "AgentInfo", "AgentNotFoundError", "ArchiveKind", "ArchiveRole", "ArchiveSlot",
    "CRCMismatchError", "ClosedError", "ConfigError", "ContentType", "CorruptionError",
    "DB", "DBStats", "DEFAULTS", "Defaults", "DeserializationError", "DreamReport",
    "DreamStage", "EmotionScore", "GraphEdgeKind", "HypergraphEdge", "HypergraphNode",
    "HypergraphSlot", "InvalidMagicError", "InvalidQueryError", "L3Graph", "L3ImportItem",
    "L3ImportMode", "L3ImportResult", "L3Relation", "L3Subgraph", "LLMError", "LlmConfig",
    "LocalModel", "MAX_EVENT_PAYLOAD_BYTES", "MAX_SUB_AGENT_NAME_BYTES",
    "MAX_UTTERANCE_PAYLOAD_BYTES", "MBTIScore", "MemHopError", "Model", "ModelUsage",
    "NotFoundError", "OperationCancelledError", "PlanNodeView", "PlanStatus", "PlanTree",
    "ProfileInput", "ProfileSlot", "SceneContext", "SceneContextTopic", "SceneMessage",
    "SceneNodeView", "SceneSlot", "SearchResult", "SerializationError", "Session",
    "StorageIOError", "TopicSlot", "code_of", "open",
    "inspect", "Inspector", "Table",
    "RecallHit",
    "DamagedRecord", "SalvageReport", "MAX_NAME_BYTES", "MAX_PREFERENCES",
    "MAX_SHORT_TEXT_BYTES", "MAX_TEXT_BYTES", "MAX_TITLE_BYTES",
}  # fmt: skip


def test_public_names_are_exactly_these() -> None:
    """memhop re-exports memhop.api's names, the read-only inspector beside them (which
    stands on its own, not on the API) and __version__, sorted."""
    inspector = {"inspect", "Inspector", "Table"}
    assert set(memhop.api.__all__) == EXPECTED - inspector
    assert set(memhop.__all__) == EXPECTED | {"__version__"}
    assert memhop.__all__ == sorted(memhop.__all__, key=str.casefold)
    for name in memhop.__all__:
        assert getattr(memhop, name) is not None


def test_memhop_inspect_names_one_thing() -> None:
    """``memhop.inspect`` is the function; the package is ``memhop.inspection``, so an
    import of ``memhop.inspect`` cannot hand back a module in its place."""
    assert callable(memhop.inspect)
    assert memhop.inspect is memhop.inspection.inspect
    assert memhop.Inspector is memhop.inspection.Inspector  # control: the package is there
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("memhop.inspect")


def test_the_size_constants_are_upstreams() -> None:
    """4 KiB events, 64 KiB utterances, 256-byte sub-agent names."""
    assert memhop.MAX_EVENT_PAYLOAD_BYTES == 4096
    assert memhop.MAX_UTTERANCE_PAYLOAD_BYTES == 65536
    assert memhop.MAX_SUB_AGENT_NAME_BYTES == 256
    upstream = memhop.Defaults(24, 20, 3_600_000, 604_800_000)
    assert dataclasses.replace(upstream, settled_scene_floor=4) == memhop.DEFAULTS
