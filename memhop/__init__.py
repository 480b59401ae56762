"""memhop: an AI agent's memory in one ``.meh`` file (a Python port of MemHop).

    import memhop

    with memhop.open("agent.meh", memhop.LocalModel(),
                     profile=memhop.ProfileInput(name="Ada")) as db:
        me = db.primary()
        opened = me.search()                      # open a turn, get the scene's tracks
        me.update(input="hi", output="hello", created_at=1_700_000_000_000)
        print(me.scene_context().to_dict())       # what to inject at the next turn

The public names are exactly ``memhop.__all__``: ``memhop.api``'s, and the read-only
inspector beside it (``inspect``, ``Inspector``, ``Table``), which stands on its own.
"""

from memhop._version import __version__ as __version__
from memhop.api import *  # noqa: F403 - the public surface is memhop.api's __all__
from memhop.api import __all__ as _api_all
from memhop.inspection import Inspector as Inspector
from memhop.inspection import inspect as inspect
from memhop.render import Table as Table

__all__ = sorted([*_api_all, "Inspector", "Table", "__version__", "inspect"], key=str.casefold)
