"""Record ids: xxHash64 (seed 0) derivations and the 16-hex surface form.

Every derived id hashes the UTF-8 bytes of a namespaced string (storage.md §5);
the prefixes keep the families disjoint. Ids are ``int`` inside the library and
16 lowercase hex digits at the facade; this module is the only converter.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable

import xxhash

from memhop.errors import InvalidQueryError

__all__ = [
    "PRIMARY_AGENT_ID",
    "SHARED_POOL_AGENT_ID",
    "content_id",
    "format_id",
    "fused_topic_id",
    "graph_edge_id",
    "graph_id",
    "graph_node_id",
    "hash_id",
    "l1_edge_id",
    "parse_id",
    "plan_node_id",
    "profile_id",
    "scene_node_id",
    "turn_topic_id",
]

PRIMARY_AGENT_ID = 0
SHARED_POOL_AGENT_ID = 0x4C33000000000000  # ASCII "L3" in the two high bytes

_HEX_DIGITS = frozenset(string.hexdigits)


_XXH64 = xxhash.xxh64_intdigest  # seed 0 is its default


def hash_id(s: str) -> int:
    """Return xxHash64 (seed 0) of ``s``'s UTF-8 bytes."""
    return _XXH64(s.encode())


def _py_pair_id(prefix: str, a: int, b: int) -> int:
    """``hash_id(f"{prefix}{a}:{b}")``: the reference ``memhop._ids.pair_id`` answers as."""
    return _XXH64(f"{prefix}{a}:{b}".encode())


# The pair derivations (a record's on every write) in one C call where the install built
# it: the f-string's decimal of a u64 was three-quarters of an id's cost.
_pair_id: Callable[[str, int, int], int]
try:
    from memhop._ids import pair_id as _pair_id
except ImportError:  # built without a C compiler (hatch_build.py says why)
    _pair_id = _py_pair_id


def format_id(value: int) -> str:
    """Return ``value`` as 16 lowercase, zero-padded hex digits."""
    return "%016x" % value  # noqa: UP031  # printf-style: two-thirds the cost of a format spec


def parse_id(text: str, what: str = "id") -> int:
    """Parse a 16-hex-digit id, case-insensitively.

    Raises InvalidQueryError naming ``what`` for a wrong length, a non-hex
    digit, or the reserved zero id.
    """
    if len(text) != 16:
        msg = f"{what} must be 16 hex digits, got {text!r}"
        raise InvalidQueryError(msg)
    if not _HEX_DIGITS.issuperset(text):
        msg = f"{what} is not hex: {text!r}"
        raise InvalidQueryError(msg)
    value = int(text, 16)
    if value == 0:
        msg = f"{what} {text!r} is the reserved zero id"
        raise InvalidQueryError(msg)
    return value


def profile_id() -> int:
    """Return the id of a domain's L0 profile (the same in every domain)."""
    return _PROFILE_ID


_PROFILE_ID = hash_id("profile")


def turn_topic_id(scene_id: int, seq: int) -> int:
    """Return the id of a scene's ``seq``-th turn topic (the first turn is 1)."""
    return _pair_id("turn:", scene_id, seq)


def fused_topic_id(scene_id: int, user_ts: int, agent_ts: int, members: Iterable[int]) -> int:
    """Return the id of a consolidation parent; member order does not matter."""
    tail = "".join(f":{m}" for m in sorted(members))
    return hash_id(f"fused:{scene_id}:{user_ts}:{agent_ts}{tail}")


def content_id(topic_id: int, seq: int) -> int:
    """Return the id of the L4 content slot ``seq`` of a topic."""
    return _pair_id("content:", topic_id, seq)


def plan_node_id(topic_id: int, step_seq: int) -> int:
    """Return the id of the L5 plan step ``step_seq`` of a topic."""
    return _pair_id("plan:", topic_id, step_seq)


def scene_node_id(scene_id: int) -> int:
    """Return the id of a scene's L1 node."""
    return hash_id(f"scene-node:{format_id(scene_id)}")


def l1_edge_id(a: int, b: int) -> int:
    """Return the id of the L1 hyperedge joining two scene nodes, in either order."""
    return _pair_id("l1edge:", a, b) if a <= b else _pair_id("l1edge:", b, a)


def graph_id(label: str) -> int:
    """Return the id a new L3 graph gets from its domain label (kept on rename)."""
    return hash_id(label)


def graph_node_id(graph: int, title: str) -> int:
    """Return the id of the L3 node titled ``title`` in ``graph``."""
    return hash_id(f"{format_id(graph)}:{title}")


def graph_edge_id(graph: int, node_ids: Iterable[int], kind: int) -> int:
    """Return the id of the L3 edge of ``kind`` over a member set, in any order."""
    members = " ".join(str(n) for n in sorted(node_ids))
    return hash_id(f"{format_id(graph)}:[{members}]:{int(kind)}")
