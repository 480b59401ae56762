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
def topic(
    id: object,
    scene_id: object,
    parent_id: object,
    depth: object,
    name: object,
    fused_keywords: object,
    user_timestamp: object,
    agent_timestamp: object,
    /,
) -> bytes | None: ...
def scene(
    scene_id: object,
    scene_name: object,
    turn_seq: object,
    last_used_at: object,
    l3_id: object,
    /,
) -> bytes | None: ...
