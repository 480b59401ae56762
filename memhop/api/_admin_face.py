"""Session methods: host-only administration of scenes and topics (never a tool)."""

from __future__ import annotations

from collections.abc import Sequence

from memhop.api import _args, _mapping
from memhop.api.results import SceneSlot, TopicSlot
from memhop.config import MAX_TITLE_BYTES
from memhop.root import admin
from memhop.root.ops import AgentOps


class AdminFace:
    """Mixed into ``Session``; every method maps arguments in and results out."""

    _ops: AgentOps

    def update_scene(
        self,
        scene_id: str,
        *,
        name: str | None = None,
        l3_id: str | None = None,
        force: bool = False,
    ) -> SceneSlot:
        """Rename a scene and/or set its L3 anchor; return the scene as stored.

        None keeps a field. ``name`` "" is refused; ``l3_id`` "" clears the
        anchor, otherwise it must name an existing graph (NotFoundError).
        Moving an anchored scene to another graph needs ``force``. A patch
        that changes nothing writes nothing. NotFoundError for an unknown scene.
        """
        stored = self._ops.run(
            admin.update_scene,
            _args.scene_id(scene_id),
            _args.optional_text(name, "name", MAX_TITLE_BYTES),
            _args.optional_graph_id(l3_id, "l3_id"),
            _args.flag(force, "force"),
        )
        return _mapping.scene_slot(stored)

    def rename_topic(self, topic_id: str, name: str) -> TopicSlot:
        """Set a topic's name only (depth, parent and keywords kept); return it.

        ``name`` "" and the reserved zero id are refused; an unknown topic is
        NotFoundError and nothing is created. The same name writes nothing.
        """
        name = _args.text(name, "name", MAX_TITLE_BYTES)
        row = self._ops.run(admin.rename_topic, _args.topic_id(topic_id), name)
        return _mapping.topic_slot(row)

    def merge_scenes(self, primary_id: str, secondary_ids: Sequence[str]) -> None:
        """Move every topic of the secondaries into the primary and delete the secondaries.

        Refused before anything is written: an empty list, the primary among
        the secondaries, a secondary listed twice, secondaries anchored to
        different graphs when the primary has no anchor; an unknown scene is
        NotFoundError. A turn open on a secondary is dropped.
        """
        self._ops.delete(
            admin.merge_scenes,
            _args.scene_id(primary_id, "primary_id"),
            _args.scene_id_list(secondary_ids, "secondary_ids"),
        )

    def delete_scene(self, scene_id: str) -> None:
        """Delete a scene with its topics, their lines, events and plans, and its L1 node.

        NotFoundError for an unknown (or already deleted) scene. A turn open
        on it is dropped; the next ``search`` picks another scene. The bytes
        stay in the file until a compaction (``Defaults.compact_dead_ratio``,
        ``DB.compact``); ``purge_scene`` removes them now.
        """
        self._ops.delete(admin.delete_scene, _args.scene_id(scene_id))

    def delete_topic(self, topic_id: str) -> None:
        """Delete a topic, every topic folded below it, and their lines, events and plans.

        The reserved zero id is refused; an unknown (or already deleted)
        topic is NotFoundError. A turn open on a deleted topic is dropped.
        The bytes stay in the file until a compaction; ``purge_topic``
        removes them now.
        """
        self._ops.delete(admin.delete_topic, _args.topic_id(topic_id))

    def purge_scene(self, scene_id: str) -> None:
        """``delete_scene``, then compact the file in place: returns once the bytes are gone.

        Every other Session of the file keeps working (current scenes and
        open turns survive). NotFoundError for an unknown scene, as
        ``delete_scene``; a scene deleted earlier is purged by ``DB.compact``.
        A compaction that fails (a full disk, a record that will not read)
        raises with the delete done and the old file whole.
        """
        self._ops.purge(admin.delete_scene, _args.scene_id(scene_id))

    def purge_topic(self, topic_id: str) -> None:
        """``delete_topic``, then compact the file in place: returns once the bytes are gone.

        As ``purge_scene``: NotFoundError for an unknown topic, a compaction
        failure raises with the delete done and the old file whole.
        """
        self._ops.purge(admin.delete_topic, _args.topic_id(topic_id))
