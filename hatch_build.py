"""Build hook: compiles memhop's optional kernels (``KERNELS``).

The wheel (and an editable install, in place) gets each compiled module when the
interpreter's C compiler works: ``memhop.index._bm25`` (recall's ranking),
``memhop.intmap._core`` (the id maps' reads and puts), ``memhop.records._json`` (the
payloads a turn writes), ``memhop.engine._frames`` (a write's frames),
``memhop._slots`` (frozen records and named tuples built when their class is called),
``memhop._ids`` (the ids of namespaced pairs, a record's on every write) and
``memhop.index._rows`` (a content slot's row in the L4 mirror). Otherwise the build goes
on pure Python, and memhop gives the same answers from its Python code, slower.
``MEMHOP_NO_KERNEL=1`` skips the compiler on purpose.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# Each kernel's source, and what runs in its place without it.
KERNELS = {
    Path("memhop") / "index" / "_bm25.c": "recall ranks in Python",
    Path("memhop") / "intmap" / "_core.c": "the id maps read and put in Python",
    Path("memhop") / "records" / "_json.c": "a turn's payloads are written in Python",
    Path("memhop") / "engine" / "_frames.c": "a write's frames are encoded in Python",
    Path("memhop") / "_slots.c": "frozen records are built through their __init__",
    Path("memhop") / "_ids.c": "record ids are derived in Python",
    Path("memhop") / "index" / "_rows.c": "the content mirror's rows are stored in Python",
}
# No fused multiply-add: the ranking kernel's sums must equal Python's bit for bit.
FLAGS = ["-O2", "-fPIC", "-ffp-contract=off"]


def _compile(source: Path, target: Path) -> str | None:
    """Compile and link ``source`` into the extension ``target``; why not, or None."""
    link = sysconfig.get_config_var("LDSHARED")
    include = sysconfig.get_paths()["include"]
    if not link or not Path(include, "Python.h").exists():
        return "no C toolchain or Python headers for this interpreter"
    args = [*shlex.split(link), *FLAGS, f"-I{include}", str(source), "-o", str(target)]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    except OSError as error:
        return f"{args[0]}: {error}"
    return None if done.returncode == 0 else done.stderr.strip()[-2000:]


class KernelHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds the compiled kernels to the wheel, or says why one is left out."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("MEMHOP_NO_KERNEL") == "1":
            return
        root = Path(self.root)
        if version != "editable":  # removed again once the wheel holds them (``finalize``)
            self._scratch = tempfile.mkdtemp(prefix="memhop-kernel-")
        for source, instead in KERNELS.items():
            name = source.stem + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
            if version == "editable":  # the source tree is what gets imported
                target = root / source.parent / name
            else:
                target = Path(self._scratch) / name
            why = _compile(root / source, target)
            if why is not None:
                print(f"memhop: no {source.name} kernel, {instead} ({why})", file=sys.stderr)
                continue
            if version != "editable":
                build_data["force_include"][str(target)] = str(source.parent / name)
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
