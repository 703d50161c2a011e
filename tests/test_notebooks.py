"""Each notebook the gallery offers for download runs top to bottom in a fresh kernel."""

import nbformat
import pytest
from nbclient import NotebookClient
from sitebuild import ROOT

SCRIPTS = sorted((ROOT / "gallery").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_downloaded_notebook_runs(script, built_site, tmp_path):
    [path] = list((built_site / "_downloads").rglob(f"{script.stem}.ipynb"))
    notebook = nbformat.read(path, as_version=4)
    assert any(cell.cell_type == "code" for cell in notebook.cells)
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert outputs, "the notebook ran but printed nothing"
