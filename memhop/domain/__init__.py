"""One agent domain in memory and beside the file.

Responsibility: what a domain holds while the file is open (its context and
lock, its model's meter, its mirrors, the slot cache, a warm start from the
scene map) and the files memhop keeps for it beside the ``.meh``: the scene
map (``map_file``, bytes in ``scene_map_codec``) and the recall file
(``recall_file``, bytes in ``recall_sections``).

Contract: the root composes; this package never imports it, nor Dream or the
facade. The in-memory structures themselves live in ``memhop.index``.
"""
