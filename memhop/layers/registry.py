"""Sub-agent registry: tenant name <-> domain id, kept as type 0x10 records.

A sub agent's registration sits in its own domain with id hash = agent id and
the name as payload (storage.md §4). The name map is rebuilt from the records
on open; a registration that will not read, or reads as "", is reported in
``Registry.unresolved``, never dropped silently. The primary (0) and the shared
L3 pool have no registration and never appear here.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass, field
from types import MappingProxyType

from memhop.engine import Engine
from memhop.errors import CorruptionError, InvalidQueryError, MemHopError, NotFoundError
from memhop.ids import PRIMARY_AGENT_ID, SHARED_POOL_AGENT_ID, format_id
from memhop.layers import codec
from memhop.records import RecordType, RegistryName

__all__ = [
    "MAX_TENANT_NAME_BYTES",
    "Registry",
    "draw_agent_id",
    "load_registry",
    "normalise_tenant_name",
    "unresolved_message",
    "write_registration",
]

MAX_TENANT_NAME_BYTES = 256  # upstream MaxSubAgentNameBytes: bytes, not characters

_RESERVED_AGENT_IDS = frozenset({PRIMARY_AGENT_ID, SHARED_POOL_AGENT_ID})

# Go's strings.TrimSpace set (unicode.IsSpace). Python's str.strip() would also
# eat U+001C..U+001F, which Go keeps: the tenant key must match upstream's.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _random_u64() -> int:
    return int.from_bytes(secrets.token_bytes(8), "little")


def unresolved_message(agent_id: int) -> str:
    """Return the report for a domain whose registration names no tenant."""
    return f"domain {format_id(agent_id)} carries no readable tenant key"


@dataclass(frozen=True, slots=True)
class Registry:
    """The registry as read from one file.

    ``by_name`` maps each tenant name to its domain and ``by_agent`` each
    named domain to its name, both in ascending agent id order. When two
    domains carry one name the higher agent id wins; a domain left with no
    name of its own is listed in ``shadowed``. ``unresolved`` lists, ascending,
    every domain with a registration that will not read or reads as "";
    ``causes`` keeps the read error of each (None for an empty name).
    """

    by_name: Mapping[str, int]
    by_agent: Mapping[int, str]
    unresolved: tuple[int, ...] = ()
    shadowed: tuple[int, ...] = ()
    causes: Mapping[int, MemHopError | None] = field(default_factory=dict)

    def is_resolved(self) -> bool:
        return not self.unresolved

    def require_resolved(self) -> None:
        """Raise for the first unresolved domain, keeping the read error's code.

        An empty name read fine but names nobody: that is CorruptionError.
        """
        if not self.unresolved:
            return
        agent_id = self.unresolved[0]
        msg = unresolved_message(agent_id)
        cause = self.causes.get(agent_id)
        if cause is None:
            raise CorruptionError(msg)
        msg = f"{msg}: {cause.message}"
        raise type(cause)(msg, code=cause.code) from cause


def normalise_tenant_name(name: str) -> str:
    """Return ``name`` trimmed as Go's TrimSpace; InvalidQueryError if blank or over 256 bytes."""
    trimmed = name.strip(_GO_SPACE)
    if not trimmed:
        msg = "sub-agent name is required"
        raise InvalidQueryError(msg)
    size = len(trimmed.encode("utf-8"))
    if size > MAX_TENANT_NAME_BYTES:
        msg = f"sub-agent name is {size} bytes; the limit is {MAX_TENANT_NAME_BYTES} bytes"
        raise InvalidQueryError(msg)
    return trimmed


def write_registration(engine: Engine, agent_id: int, name: str) -> None:
    """Write the registry record of a sub-agent domain durably.

    ``name`` must already be normalised (``normalise_tenant_name``); the
    primary and the shared pool cannot be registered (InvalidQueryError).
    """
    if agent_id in _RESERVED_AGENT_IDS:
        msg = f"domain {format_id(agent_id)} is reserved and takes no registration"
        raise InvalidQueryError(msg)
    if normalise_tenant_name(name) != name:
        msg = f"sub-agent name {name!r} is not trimmed"
        raise InvalidQueryError(msg)
    codec.write(engine, agent_id, agent_id, RegistryName(name=name))


def load_registry(engine: Engine) -> Registry:
    """Rebuild the registry from every domain's 0x10 records (ascending agents, then ids).

    The id hash is not checked against the agent id, as upstream. A record
    that vanishes while reading is skipped; any other failure or an empty
    name marks its domain unresolved.
    """
    winner: dict[str, int] = {}
    named: set[int] = set()
    unresolved: list[int] = []
    causes: dict[int, MemHopError | None] = {}
    for agent_id in engine.agents():
        if agent_id in _RESERVED_AGENT_IDS:
            continue
        for id_hash in engine.ids_of_type(agent_id, RecordType.REGISTRY):
            try:
                name = codec.read(engine, agent_id, id_hash, RegistryName).name
            except NotFoundError:
                continue
            except MemHopError as exc:
                _mark(unresolved, causes, agent_id, exc)
                continue
            if not name:
                _mark(unresolved, causes, agent_id, None)
                continue
            # Agents come ascending, so a later (higher) id takes the name over.
            winner[name] = agent_id
            named.add(agent_id)
    by_name = dict(sorted(winner.items(), key=lambda kv: (kv[1], kv[0])))
    by_agent: dict[int, str] = {}
    for name, agent_id in by_name.items():
        by_agent.setdefault(agent_id, name)
    return Registry(
        by_name=MappingProxyType(by_name),
        by_agent=MappingProxyType(by_agent),
        unresolved=tuple(unresolved),
        shadowed=tuple(sorted(named - by_agent.keys())),
        causes=MappingProxyType(causes),
    )


def _mark(
    unresolved: list[int],
    causes: dict[int, MemHopError | None],
    agent_id: int,
    cause: MemHopError | None,
) -> None:
    if agent_id not in causes:
        unresolved.append(agent_id)
        causes[agent_id] = cause


def draw_agent_id(taken: Set[int], rand: Callable[[], int] = _random_u64) -> int:
    """Return a fresh sub-agent id: never 0, never the shared pool, never in ``taken``.

    Pass in ``taken`` every id in use: ``engine.agents()`` and the registered ones.

    ``rand`` answers a uniform u64 (default: 8 CSPRNG bytes, little-endian).
    """
    while True:
        candidate = rand()
        if candidate not in _RESERVED_AGENT_IDS and candidate not in taken:
            return candidate
