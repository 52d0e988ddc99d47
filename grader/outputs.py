"""Re-execute solution notebooks in place, so their stored outputs are the ones CI reproduces.

Run through `make outputs` (which sets COURSE_QUICK=1 and COURSE_OFFLINE=1, as CI does).
"""
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from grader.course import REPO_ROOT, chapters, source_notebook


def skipped_by_nbval(cell) -> bool:
    """nbval never runs these cells, so their committed output must stay empty too."""
    return cell.cell_type == "code" and any(
        line.strip().lstrip("#").strip() == "NBVAL_SKIP" for line in cell.source.splitlines()
        if line.strip().startswith("#"))


_NBVAL_SKIPS = "nbval-skips-this-cell"   # a tag for the run only, removed again


def execute_in_place(path: Path, timeout: int = 600) -> None:
    """Run the notebook as nbval will; store its outputs and the kernel's language_info (as
    JupyterLab writes it, so the notebook opens unmodified)."""
    nb = nbformat.read(path, as_version=4)
    skipped = [c for c in nb.cells if skipped_by_nbval(c)]
    for cell in skipped:
        cell.outputs, cell.execution_count = [], None
        cell.metadata.setdefault("tags", []).append(_NBVAL_SKIPS)
    # store_widget_state=False: tqdm's progress widgets would add kilobytes of run-specific
    # state to the notebook's metadata on every run
    NotebookClient(nb, timeout=timeout, kernel_name="python3", skip_cells_with_tag=_NBVAL_SKIPS,
                   store_widget_state=False, resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in skipped:
        cell.metadata["tags"].remove(_NBVAL_SKIPS)
        if not cell.metadata["tags"]:
            del cell.metadata["tags"]
    for cell in nb.cells:  # execution metadata holds wall-clock stamps: keep diffs clean
        cell.metadata.pop("execution", None)
    nbformat.write(nb, path)


def refresh(names=None, course: Path = REPO_ROOT) -> list:
    names = list(names) if names else chapters(course)
    for name in names:
        print(f"executing {name} ...", flush=True)
        execute_in_place(source_notebook(name, course))
    return names
