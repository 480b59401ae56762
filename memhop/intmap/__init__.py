"""IntMap: a ``u64 -> u64`` map in sorted pages of flat arrays (``pages`` says how).

``COMPILED`` says whether its reads and puts run on the compiled core (``_core.c``)
or the Python one (``core.py``); both give the same answers.
"""

from memhop.intmap.core import NEW, UNTYPED
from memhop.intmap.pages import COMPILED, NO_IDS, IntMap

__all__ = ["COMPILED", "NEW", "NO_IDS", "UNTYPED", "IntMap"]
