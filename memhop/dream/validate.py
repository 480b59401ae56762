"""Pure checks on a proposed group and the listing it was proposed over.

Upstream checks, in its order: a group of one, a member already claimed by a
group that landed earlier in the same reply, an id not in the listing, an
empty summary. Beyond upstream (it only asks the model for them): an id named
twice in one group, and members that are not adjacent in the listing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from memhop.llm import Group, TopicDigest
from memhop.records import TopicSlot

__all__ = ["Fingerprint", "digests", "fingerprint", "group_problem", "positions"]

Fingerprint = int
"""What a decline is remembered against: a hash of the floor and the listing shown (kept
for every scene a model declined, so a hash rather than the listing itself)."""


def digests(listing: Sequence[TopicSlot]) -> tuple[TopicDigest, ...]:
    """The listing as the model sees it, in listing order."""
    return tuple(TopicDigest(t.id, t.depth, tuple(t.fused_keywords)) for t in listing)


def fingerprint(floor: int, listing: Sequence[TopicSlot]) -> Fingerprint:
    return hash((floor, digests(listing)))


def positions(listing: Sequence[TopicSlot]) -> dict[int, int]:
    """Topic id -> index in the listing."""
    return {t.id: i for i, t in enumerate(listing)}


def group_problem(group: Group, order: Mapping[int, int], claimed: Set[int]) -> str | None:
    """Why ``group`` cannot be applied, or None when it may be."""
    members = group.member_ids
    if len(members) < 2:
        return "a group needs at least two members"
    if len(set(members)) != len(members):
        return "the group names one id twice"
    if any(m in claimed for m in members):
        return "a member was already folded by an earlier group of this reply"
    if any(m not in order for m in members):
        return "a member is not in the listing the model was shown"
    spots = sorted(order[m] for m in members)
    if spots[-1] - spots[0] != len(spots) - 1:
        return "the members are not adjacent in the listing"
    if not group.summary.strip():
        return "the group has an empty summary"
    return None
