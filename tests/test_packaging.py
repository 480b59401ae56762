"""memhop builds as a wheel and an sdist, and the built wheel works outside the source tree.

memhop is not on any package index: a user installs it from a clone (``pip install .``) or
from a wheel built there (``python -m build``, then ``pip install dist/memhop-*.whl``). This
test does the second path as a user would, on the files of this checkout: it builds the sdist
and a wheel from that sdist, installs the wheel into a fresh virtual environment, and runs the
quickstart from a directory outside the tree with that environment's interpreter.

Kept fast and offline: the build runs without isolation (``hatchling`` and ``build`` come with
the ``[test]`` extra, and ``build`` refuses to run if the backend's requirements are missing),
and the venv sees the system site-packages, so the core dependencies need no download; the
wheel's own metadata is checked to declare exactly those dependencies instead.
"""

from __future__ import annotations

import email.parser
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORE = {"xxhash", "openai", "portalocker"}  # the only dependencies of the core (the brief's rule)
# The compiled kernels (hatch_build.KERNELS) are built where a C compiler works; CI requires them.
KERNELS = (
    "memhop/index/_bm25",
    "memhop/intmap/_core",
    "memhop/records/_json",
    "memhop/engine/_frames",
    "memhop/_slots",
    "memhop/_ids",
    "memhop/index/_rows",
)
KERNEL_REQUIRED = os.environ.get("MEMHOP_REQUIRE_KERNEL") == "1"
EXTRAS = {"mcp", "notebook"}  # the extras the docs tell users to install


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH would put a checkout on the path; LLM_* would send the quickstart to a model.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("LLM_")}
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel, as ``python -m build`` makes them (the wheel from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)], REPO)
    return out


def only(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_the_sdist_holds_what_a_build_needs(dist: Path) -> None:
    sdist = only(dist, "memhop-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    needed = {"pyproject.toml", "README.md", "LICENSE-MIT", "LICENSE-APACHE", "memhop/py.typed"}
    assert needed <= names
    assert "memhop/_version.py" in names  # the version hatchling reads
    sources = {"memhop/_kernel.h", *(f"{k}.c" for k in KERNELS)}
    assert {"hatch_build.py", "memhop/index/_bm25.pyi", *sources} <= names
    assert not [name for name in names if name.endswith((".so", ".pyd"))]  # source, no builds
    # `python -m build` with neither --sdist nor --wheel builds the wheel from the unpacked
    # sdist, so the wheel's existence is the proof that the sdist builds.
    only(dist, "memhop-*.whl")


def test_the_wheel_carries_the_kernels_built_not_their_source(dist: Path) -> None:
    wheel = only(dist, "memhop-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    built = [
        n for n in names if n.startswith(tuple(f"{k}." for k in KERNELS)) and n.endswith(".so")
    ]
    assert "memhop/index/_bm25.pyi" in names  # its types, for users' mypy
    assert not [n for n in names if n.endswith((".c", ".h"))]
    if built:  # a compiled kernel makes the wheel one of this platform's
        assert "-py3-none-any" not in wheel.name
    elif not KERNEL_REQUIRED:
        pytest.skip("no C compiler here: the wheel is pure Python")
    assert sorted(n.split(".", 1)[0] for n in built) == sorted(KERNELS), names


def test_the_wheel_declares_exactly_the_core_dependencies(dist: Path) -> None:
    wheel = only(dist, "memhop-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(meta).decode())
        assert "memhop/py.typed" in archive.namelist()  # typed for users' mypy
    requires = metadata.get_all("Requires-Dist") or []
    core = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0] for r in requires if "extra ==" not in r}
    assert core == CORE
    assert set(metadata.get_all("Provides-Extra") or []) >= EXTRAS
    assert "pandas>=2.0; extra == 'notebook'" in requires  # an extra carries its package


def test_the_wheel_installs_and_runs_the_quickstart_outside_the_tree(
    dist: Path, tmp_path: Path
) -> None:
    wheel = only(dist, "memhop-*.whl")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], REPO)
    python = venv / "bin" / "python"
    # The system pip installs into the venv it runs under; --ignore-installed leaves this
    # checkout's own (editable) install alone.
    install = ["-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed"]
    run([str(python), *install, str(wheel)], tmp_path)

    # The quickstart and its data are repository files, not part of the wheel (the data is
    # CC BY-NC, the wheel MIT OR Apache-2.0): a user runs them from a clone, so copy both.
    user = tmp_path / "user"
    (user / "examples" / "data").mkdir(parents=True)
    for name in ("quickstart.py", "data/locomo-conv-26.json"):
        shutil.copy(REPO / "examples" / name, user / "examples" / name)
    where = run([str(python), "-c", "import memhop; print(memhop.__file__)"], user).stdout
    assert Path(where.strip()).is_relative_to(venv), where  # the wheel, not this checkout
    assert not Path(where.strip()).is_relative_to(REPO)

    loads = (
        "from memhop.index.kernel import COMPILED as ranks; "
        "from memhop.intmap import COMPILED as maps; print(ranks, maps)"
    )
    if KERNEL_REQUIRED:  # the wheel's kernels load where the wheel is installed
        assert run([str(python), "-c", loads], user).stdout.strip() == "True True"

    shown = run([str(python), "examples/quickstart.py"], user).stdout
    assert "=== injected at the next turn ===" in shown
    assert "=== end of injected block ===" in shown
    # The console script the wheel declares is installed and runs.
    assert "usage: memhop" in run([str(venv / "bin" / "memhop"), "--help"], user).stdout
