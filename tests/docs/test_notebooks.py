"""Each notebook the gallery offers for download runs top to bottom in a fresh kernel."""

import os

import nbformat
import pytest
from nbclient import NotebookClient
from sitebuild import ROOT

SCRIPTS = sorted(path for path in (ROOT / "gallery").rglob("*.py") if not path.name.startswith("_"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_downloaded_notebook_runs(script, built_site, tmp_path, monkeypatch):
    # The kernel inherits it: a notebook imports its section's helpers (gallery/<section>/_*.py) and the
    # gallery's (gallery/_diagrams.py) as its page does.
    path = os.pathsep.join(filter(None, [str(script.parent), str(ROOT / "gallery"), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    [download] = list((built_site / "_downloads").rglob(f"{script.stem}.ipynb"))
    notebook = nbformat.read(download, as_version=4)
    assert any(cell.cell_type == "code" for cell in notebook.cells)
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert outputs, "the notebook ran but printed nothing"
