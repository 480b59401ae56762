from array import array

def store(
    columns: tuple[array[int], ...],
    at: int,
    id_hash: int,
    topic_id: int,
    seq: int,
    kind: int,
    content_type: int,
    role: int,
    node_seq: int,
    created_at: int,
    lower: int,
    /,
) -> bool: ...
