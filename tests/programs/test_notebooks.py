"""The notebooks in notebooks/ run top to bottom in a fresh kernel (nbclient). Each cell asserts
that PyTorch, jaxgrad and plain JAX agree, so a notebook that drifts from the libraries fails here.

The notebooks are stored without outputs (checked below): what a reader sees is what this test
just ran, and measured numbers (timings, memory) never go stale in the repository.
"""

from __future__ import annotations

import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_from_a_clean_kernel(path):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on failure


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    stale = [i for i, cell in enumerate(notebook.cells)
             if cell.cell_type == "code" and (cell.outputs or cell.execution_count)]
    assert not stale, (f"{path.name}: cells {stale} carry outputs; clear them "
                       "(jupyter nbconvert --clear-output --inplace)")


def test_readme_links_every_notebook():
    readme = (NOTEBOOK_DIR.parent / "README.md").read_text()
    missing = [p.name for p in NOTEBOOKS if f"(notebooks/{p.name})" not in readme]
    assert not missing, f"README.md does not link {missing}"
