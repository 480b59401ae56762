"""examples/inspect.ipynb runs top to bottom in a fresh kernel and shows HTML tables."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("pandas")

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "inspect.ipynb"


def test_the_example_notebook_executes_and_renders_tables(tmp_path: Path) -> None:
    """The "python3" kernel is ipykernel's own, found in this environment: nothing to install."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    markup = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(markup) >= 6  # inspector, agents, topics, events, stats, scene context
    assert any("<caption>topics</caption>" in m and "dream" in m for m in markup)
    texts = [o["data"].get("text/plain", "") for o in outputs if "data" in o]
    assert "1" in texts  # refresh() saw the one turn the open DB closed after the first read
    assert not list(tmp_path.iterdir())  # the notebook cleaned up after itself
