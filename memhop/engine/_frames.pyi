from collections.abc import Sequence

def encode_batch(
    entries: Sequence[tuple[int, int, int, bytes]], /
) -> tuple[bytes, list[tuple[int, int, int, int]]] | None: ...
