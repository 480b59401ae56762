"""memhop.index._bm25, the optional compiled kernel (``_bm25.c``): see its source."""

from collections.abc import Sequence

def top(
    lists: Sequence[tuple[object, object, float]],
    lengths: object,
    base: float,
    per_length: float,
    want: int,
    /,
) -> list[tuple[float, int]]:
    """(score, slot) of every document at or above the ``want``-th best, in no order."""
