"""In-memory mirrors rebuilt from records at open: no engine, no I/O.

Responsibility: answer the hot reads (a scene's surface, a topic's content
slots, a turn's plan tree) in time proportional to the answer, not to the
file. Each mirror is built from records the root collected through the layers
and is updated by the root after each successful write.

Contract: a mirror never invents state; rebuilt from the same records it is
equal to the one kept up to date incrementally (tests compare them).
"""
