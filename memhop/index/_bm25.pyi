"""memhop.index._bm25, the optional compiled kernel (``_bm25.c``): see its source."""

from collections.abc import Callable, Sequence

def top(
    lists: Sequence[tuple[object, object, float] | tuple[object, object, float, float]],
    lengths: object,
    base: float,
    per_length: float,
    want: int,
    where: tuple[object, object, int, object, object, int, int] | None = None,
    scratch: bytearray | None = None,
    created: tuple[object, object] | Callable[[], tuple[object, object]] | None = None,
    /,
) -> list[tuple[float, int]]:
    """(score, slot) of every document at or above the ``want``-th best, in no order.

    A list's fourth item, its bound (the most it gives any document), lets the kernel
    prune once no document not reached yet can reach the top (every list needs one).
    ``scratch``: zeros the scores are summed in (8 bytes a slot), left zeroed again.
    ``created``: each slot's time (base, tail), or a function returning it, called only
    for a tie at the k-th with more documents than places: the tie comes back cut to
    those that can place when it is broken newest first."""

def kept(column: object, keep: bytes, /) -> bytes:
    """The items of ``column`` whose byte in ``keep`` is not 0, as raw bytes."""

def postings_kept(
    slots: object, counts: object, lengths: object, renumber: object, width: int, /
) -> tuple[bytes, bytes, int, int]:
    """A term's live postings renumbered: (slots, counts, highest count, shortest or -1)."""
