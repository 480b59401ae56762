def archive(
    id_hash: object,
    kind: object,
    seq: object,
    content_type: object,
    role: object,
    topic_id: object,
    event_type: object,
    node_seq: object,
    created_at: object,
    content: object,
    byte_types: tuple[type, ...],
    /,
) -> bytes | None: ...
