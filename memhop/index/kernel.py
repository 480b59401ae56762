"""The compiled kernel's functions (``_bm25.c``), where the install built it.

``COMPILED`` says whether it did; a caller asks before it calls any of them
(``RecallIndex(compiled=...)`` keeps the answer). Without the kernel, recall
ranks and repacks in Python, with the same results (tests compare them).
"""

from __future__ import annotations

try:
    from memhop.index._bm25 import kept, postings_kept, top
except ImportError:  # built without a C compiler (hatch_build.py says why)
    COMPILED = False
else:
    COMPILED = True

__all__ = ["COMPILED", "kept", "postings_kept", "top"]
