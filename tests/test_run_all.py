"""Run All reads a student release to its last cell, as JupyterLab runs it.

JupyterLab's Run All, like nbclient, stops at the first cell that raises, unless the cell is tagged
`raises-exception`. The release tags every exercise cell (grader/pipeline.py, RELEASE), so an
untouched release, every exercise still open, runs to its end: figures and prose after the
first exercise are not left unrun. Executed here with nbclient's own rule (allow_errors=False).
"""
import os
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from conftest import ALL_CHAPTERS
from grader.course import release_notebook
from grader.pipeline import STUB_MESSAGE




def run_all(path):
    """Execute the notebook as Run All does; return it, or the error that stopped it."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", shutdown_kernel="immediate",
                            resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except CellExecutionError as err:
        return err
    return nb


@pytest.fixture(scope="module")
def ran(released_course):
    with pytest.MonkeyPatch.context() as mp, ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        # The last cell, the self-check, would run the whole notebook again in a second kernel;
        # test_selfcheck.py tests it. Here it only has to run: as under nbgrader, it says it skips.
        mp.setenv("NBGRADER_EXECUTION", "autograde")
        mp.setenv("OMP_NUM_THREADS", "1")   # two notebooks at once: threads would only compete
        runs = dict(zip(ALL_CHAPTERS, pool.map(
            lambda ch: run_all(release_notebook(ch, released_course)), ALL_CHAPTERS)))
    return runs.__getitem__


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_run_all_reaches_the_last_cell_of_the_release(ran, chapter):
    nb = ran(chapter)
    assert not isinstance(nb, Exception), f"Run All stopped in {chapter}:\n{nb}"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[-1].execution_count is not None, "the last cell did not run"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert errors, "a release with every exercise open raised nothing?"
    first = errors[0]   # nothing fails before the first open exercise, and it says what to do
    assert (first.ename, first.evalue) == ("NotImplementedError", STUB_MESSAGE), (first.ename, first.evalue)
