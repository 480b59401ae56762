"""Session: one agent domain of an open file (the facade; no logic lives here).

Every method refuses bad input with InvalidQueryError (1003) before anything
is written or any model is asked, and raises ClosedError (5002) once the DB
is closed (``agent_id`` still answers).
"""

from __future__ import annotations

from collections.abc import Sequence

from memhop import ids
from memhop.api import _args, _mapping
from memhop.api._admin_face import AdminFace
from memhop.api._dream_face import DreamFace
from memhop.api._graph_face import GraphFace
from memhop.api._plan_face import PlanFace
from memhop.api._surfaces import Surfaces
from memhop.api.results import (
    ArchiveSlot,
    ProfileSlot,
    RecallHit,
    SceneContext,
    SceneSlot,
    SearchResult,
    TopicSlot,
)
from memhop.api.types import ArchiveKind, ArchiveRole, ContentType
from memhop.config import ProfileInput
from memhop.root import content as archive_ops
from memhop.root import reads, turn
from memhop.root.content import ArchiveQuery
from memhop.root.ops import AgentOps
from memhop.root.recall import RecallQuery, recall_in_steps


class Session(PlanFace, GraphFace, DreamFace, AdminFace):
    """One domain's memory. Get one from ``DB.primary()``, ``sub_agent()`` or ``agent()``.

    The turn loop and the reads live here; plans, the graph, Dream and the
    admin methods come from one mixin each.
    """

    def __init__(self, ops: AgentOps, surfaces: Surfaces) -> None:
        self._ops = ops
        self._surfaces = surfaces  # the DB's memo of rows it mapped lately

    @property
    def agent_id(self) -> str:
        """The domain's id as 16 hex digits (the primary is all zeros); works after close."""
        return ids.format_id(self._ops.agent_id)

    def __repr__(self) -> str:
        return f"<memhop.Session agent_id={self.agent_id}>"

    # ---- the turn loop -------------------------------------------------------------------

    def search(
        self, *, scene_id: str = "", l3_id: str = "", new_scene: bool = False
    ) -> SearchResult:
        """Open the next turn and return the scene's surface, the profile and its brief.

        Continues the domain's current scene unless ``new_scene`` (a fresh scene,
        optionally anchored to graph ``l3_id``) or ``scene_id`` names one.
        Writes one record, made durable by the turn's next write (at once for a
        new scene); call once per turn (``scene_context`` is the pure read).
        NotFoundError for an unknown scene or anchor graph.
        """
        opened = self._ops.open_turn(*_args.search_args(scene_id, l3_id, new_scene))
        return self._surfaces.search_result(
            opened.profile, opened.scene, opened.topics, opened.new_topic_id, opened.provenance
        )

    def append_archive(
        self,
        *,
        content: str,
        created_at: int,
        kind: ArchiveKind | int | str = 0,
        seq: int = 0,
        content_type: ContentType | int | str = 0,
        role: ArchiveRole | int | str = 0,
        event_type: str = "",
        node_seq: int = 0,
    ) -> int:
        """Record an utterance or event on the open turn; return its slot number.

        ``seq`` 0 takes the next free slot (3 or later); a named seq overwrites.
        ``kind``, ``content_type`` and ``role`` take a member, its number or its
        name in any case (``kind="event"``). Durable when it returns, unless
        ``Defaults.durability`` is "turn" (then at the turn's ``update``).
        Refused: no open turn ("no turn is open"), time not in milliseconds,
        events over 4 KiB, utterances over 64 KiB, role dream.
        """
        item = _args.archive_input(
            content, created_at, kind, seq, content_type, role, event_type, node_seq
        )
        return self._ops.run_in_turn(archive_ops.append_archive, item)

    def update(
        self, *, created_at: int, input: str = "", output: str = "", outcome: str = ""
    ) -> TopicSlot:
        """Close the open turn: store its lines, extract keywords (one model call), list it.

        Needs at least one of input, output, outcome. Closing the same turn
        again is a replay. LLMError if the model fails; the lines stay stored
        and the turn stays open for a retry.
        """
        row = self._ops.on_scene(
            turn.update, *_args.update_args(input, output, outcome, created_at)
        )
        return self._surfaces.topic_slot(row)

    # ---- reads ---------------------------------------------------------------------------

    def scene_context(self, scene_id: str = "") -> SceneContext:
        """Read a scene's rows (depth <= 2) with their lines; "" is the current scene.

        The pure read: no turn opened, nothing written. A domain that never had
        a scene answers an empty context; a named missing scene is NotFoundError.
        """
        view = self._ops.on_scene(reads.scene_context, _args.scene_ref(scene_id))
        return _mapping.scene_context(view.name, view.rows)

    def list_scenes(self, l3_id: str = "") -> list[SceneSlot]:
        """The domain's scenes in id order; with ``l3_id``, only those anchored to it."""
        anchor = _args.id_or_unset(l3_id, "l3_id")
        return [_mapping.scene_slot(s) for s in self._ops.run(reads.list_scenes, anchor or None)]

    def search_l4(
        self,
        *,
        keyword: str = "",
        start: int = 0,
        end: int = 0,
        ids: Sequence[str] = (),
        topic_id: str | None = None,
        type: ContentType | int | str | None = None,
        kind: ArchiveKind | int | str | None = None,
        node_seq: int = 0,
        limit: int = 0,
    ) -> list[ArchiveSlot]:
        """Read the domain's stored lines and events; every given condition must hold.

        With ``topic_id`` rows come in slot order, otherwise by time then id;
        ``limit`` keeps the last rows. ``keyword`` matches content, case-insensitively.
        ``type`` and ``kind`` take a member, its number or its name (``kind="event"``).
        """
        query = ArchiveQuery(
            keyword=_args.text(keyword, "keyword"),
            start=_args.integer(start, "start"),
            end=_args.integer(end, "end"),
            ids=_args.id_list(ids, "ids"),
            topic_id=None if topic_id is None else _args.topic_id(topic_id),
            type=_args.optional_enum_code(type, ContentType, "type"),
            kind=_args.optional_enum_code(kind, ArchiveKind, "kind"),
            node_seq=_args.integer(node_seq, "node_seq"),
            limit=_args.integer(limit, "limit"),
        )
        return [_mapping.archive_slot(s) for s in self._ops.run(archive_ops.search_l4, query)]

    def recall(
        self, query: str, *, limit: int = 5, scene_id: str = "", start: int = 0, end: int = 0
    ) -> list[RecallHit]:
        """Rank this domain's memory for ``query`` and return the best ``limit`` hits, best first.

        memhop's own (upstream has no query search). Ranks every surface row (a
        turn's keywords and lines; a Dream row's summary and what it folded) and
        every event by BM25 over words (stop words dropped, plurals and -ing/-ed
        folded). ``scene_id`` keeps one scene; ``start``/``end`` (ms, inclusive)
        bound ``created_at``. A pure read: nothing is written, no model is asked.
        The domain's first recall after an open reads the index the last close
        saved beside the file (``<file>.recall``) when it still matches the file.
        InvalidQueryError for an empty query or a ``limit`` outside 1..100.
        """
        found = recall_in_steps(
            self._ops,
            RecallQuery(
                text=_args.text(query, "query"),
                limit=_args.integer(limit, "limit"),
                scene_id=_args.id_or_unset(scene_id, "scene_id"),
                start=_args.integer(start, "start"),
                end=_args.integer(end, "end"),
            ),
        )
        return [_mapping.recall_hit(f) for f in found]

    def get_l0(self) -> ProfileSlot:
        """The domain's profile (an empty one if never written)."""
        return self._ops.run(reads.get_l0)

    def update_l0(self, profile: ProfileInput) -> None:
        """Write the host half of the profile whole (name, role, personality, preferences).

        A sub-agent's name is its handle and cannot change. Emotion and MBTI
        are kept; an omitted personality clears the distilled one.
        """
        tenant = self._ops.tenant()  # the registry lock is taken before the domain lock
        self._ops.run(reads.update_l0, profile, tenant, self._ops.now())
