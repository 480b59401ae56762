"""The operations of one domain: each takes the domain lock and composes the layers."""

from __future__ import annotations

from memhop.config import ProfileInput
from memhop.records import ArchiveSlot, ProfileSlot, SceneSlot, TopicSlot
from memhop.root import content, reads, turn
from memhop.root.content import ArchiveQuery, ContentInput
from memhop.root.reads import SceneView
from memhop.root.root import Root
from memhop.root.turn import Opened


class AgentOps:
    """Every ``Session`` call of one domain, run inside that domain's lock."""

    def __init__(self, root: Root, agent_id: int) -> None:
        self.root = root
        self.agent_id = agent_id

    def search(self, scene_id: int, l3_id: int, new_scene: bool) -> Opened:
        with self.root.domain(self.agent_id) as ctx:
            now = self.root.clock()
            return turn.search(self.root.engine, ctx, now, scene_id, l3_id, new_scene)

    def append_archive(self, item: ContentInput) -> int:
        with self.root.domain(self.agent_id) as ctx:
            return content.append_archive(self.root.engine, ctx, item)

    def update(self, user: str, agent: str, outcome: str, created_at: int) -> TopicSlot:
        with self.root.domain(self.agent_id) as ctx:
            return turn.update(self.root.engine, ctx, user, agent, outcome, created_at)

    def search_l4(self, query: ArchiveQuery) -> list[ArchiveSlot]:
        with self.root.domain(self.agent_id) as ctx:
            return content.search_l4(self.root.engine, ctx, query)

    def get_l0(self) -> ProfileSlot:
        with self.root.domain(self.agent_id) as ctx:
            return reads.get_l0(self.root.engine, ctx)

    def update_l0(self, given: ProfileInput) -> None:
        tenant = self.root.tenant_name(self.agent_id)  # registry lock before the domain lock
        with self.root.domain(self.agent_id) as ctx:
            reads.update_l0(self.root.engine, ctx, given, tenant, self.root.clock())

    def list_scenes(self, l3_id: int | None) -> list[SceneSlot]:
        with self.root.domain(self.agent_id) as ctx:
            return reads.list_scenes(self.root.engine, ctx, l3_id)

    def scene_context(self, scene_id: int) -> SceneView:
        with self.root.domain(self.agent_id) as ctx:
            return reads.scene_context(self.root.engine, ctx, scene_id)
