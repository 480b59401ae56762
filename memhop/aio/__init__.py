"""memhop from asyncio: ``open`` -> AsyncDB -> AsyncSession, the sync surface awaited.

Every method has the sync surface's name and arguments, as ``async def``. The
AsyncDB owns a bounded thread pool (``workers``, 4 by default) and runs each
call there whole, so every guarantee of the sync surface holds and the event
loop keeps running while a call waits on the disk or the model.

Cancelling a task that awaits a call never leaves half a call behind: a call
still queued is dropped (it never ran, nothing was written); a call already
running completes in its thread as the whole sync call it is (a turn closes,
or is refused, entirely) and only its result is discarded. ``close()`` waits
for such calls before it closes the file. ``dream`` is the one call a
cancellation reaches: unless the caller passed its own ``cancel`` event, the
pass stops at its next stage boundary (each stage applies whole or not at all).
"""

from memhop.aio.db import AsyncDB, Opening, open
from memhop.aio.pool import DEFAULT_WORKERS
from memhop.aio.session import AsyncSession

__all__ = ["DEFAULT_WORKERS", "AsyncDB", "AsyncSession", "Opening", "open"]
