"""Student self-check: run a notebook's visible tests and print one line per exercise.

    make check NB=notebooks/01_tensors/01_tensors.ipynb
    # or, in the notebook's last cell:  check_notebook("01_tensors.ipynb")

In the last cell, the notebook checked is the one the cell runs in wherever Jupyter's server says
which (JupyterLab, Notebook 7, JupyterHub), so that a copy (`01_tensors.updated.ipynb`, a duplicate)
checks itself; the name given is used where the kernel cannot tell (another front end).

The saved notebook is executed top to bottom in a fresh kernel, without hidden tests (they are
stripped if present, e.g. when an instructor checks a solutions notebook) and without the cell
that called the check (so it does not run itself again). While nbgrader executes the notebook
(autograde, validate: NBGRADER_EXECUTION is set) the check does nothing. Points are those the grader would give
if the hidden tests pass too: a pass here is necessary, not sufficient.
"""
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# nbformat and nbclient take about 2 s to import: they are imported where a check really runs,
# so that the notebook's self-check cell costs nothing while nbgrader grades it.

HIDDEN_TESTS = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?", re.S | re.M)
CALLS_CHECK = re.compile(r"\bcheck_notebook\s*\(")
# check_notebook("NN_topic.ipynb"): the call, then the quoted file name, which `name_in_check_cell` replaces
NAMED_CHECK = re.compile(r"""(?P<call>\bcheck_notebook\s*\(\s*)(?P<quote>["'])[^"'\n]*?\.ipynb(?P=quote)""")


@dataclass
class ExerciseResult:
    name: str
    points: float
    passed: bool
    message: str


def prepare(nb):
    """The notebook as the check runs it: no hidden tests, no self-check cell, no old outputs."""
    import nbformat
    nb = nbformat.from_dict(nb)
    kept = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            if CALLS_CHECK.search(cell.source):
                continue
            cell.source = HIDDEN_TESTS.sub("", cell.source)
            cell.outputs, cell.execution_count = [], None
        kept.append(cell)
    nb.cells = kept
    return nb


def _failure(cell) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            if output.get("ename") == "NotImplementedError":
                return "not attempted yet (the stub still raises NotImplementedError)"
            if output.get("ename") == "CellTimeoutError":
                return "took too long (an endless loop?)"
            return f"{output.get('ename')}: {output.get('evalue')}".strip()
    return ""


def run_checks(path, timeout: int = 120) -> list:
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    from grader.pipeline import SKIP_WHEN_GRADING
    path = Path(path)
    nb = prepare(nbformat.read(path, as_version=4))
    with tempfile.TemporaryDirectory(prefix="selfcheck-") as sockets:
        # Unix sockets rather than TCP: no network port, and none of ipykernel's warning about
        # unencrypted TCP in the student's cell
        kernel = KernelManager(kernel_name="python3", transport="ipc", ip=os.path.join(sockets, "k"))
        # demonstrations that no test depends on are skipped, as when grading (a torchrun launch...)
        client = NotebookClient(nb, km=kernel, timeout=timeout, allow_errors=True,
                                skip_cells_with_tag=SKIP_WHEN_GRADING, shutdown_kernel="immediate",
                                resources={"metadata": {"path": str(path.parent.resolve())}})
        client.execute()
    results = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            message = _failure(cell)
            results.append(ExerciseResult(meta.get("grade_id", "?"), float(meta.get("points", 0)),
                                          not message, message))
    return results


def format_table(results) -> str:
    width = max([len(r.name) for r in results] + [8])
    lines = [f"{'exercise':<{width}}  result  points", f"{'-' * width}  ------  ------"]
    for r in results:
        points = f"{r.points if r.passed else 0:g}/{r.points:g}"
        lines.append(f"{r.name:<{width}}  {'PASS' if r.passed else 'FAIL':<6}  {points:>6}"
                     + (f"   {r.message.splitlines()[0][:100]}" if r.message else ""))
    earned = sum(r.points for r in results if r.passed)
    total = sum(r.points for r in results)
    lines.append(f"visible tests: {sum(r.passed for r in results)}/{len(results)} passed, "
                 f"{earned:g}/{total:g} points if the hidden tests pass too")
    return "\n".join(lines)


def name_in_check_cell(nb, name: str):
    """Make the self-check cell of `nb` name `name`, the file `nb` is written to (a copy of a chapter)."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = NAMED_CHECK.sub(lambda m: f"{m['call']}{m['quote']}{name}{m['quote']}", cell.source)
    return nb


def exercise_ids(path) -> list:
    """The grade ids of a notebook's exercises (its answer cells), in order."""
    import json
    cells = json.loads(Path(path).read_text()).get("cells", [])
    return [c["metadata"]["nbgrader"]["grade_id"] for c in cells
            if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c["metadata"]["nbgrader"].get("grade_id")]


def lacking_exercises(notebook, release) -> list:
    """The exercises of `release` that `notebook` does not have (both paths to notebooks)."""
    have = set(exercise_ids(notebook))
    return [grade_id for grade_id in exercise_ids(release) if grade_id not in have]


def older_release(path, releases=None) -> str | None:
    """What to tell a student whose notebook lacks exercises that the course's current release of its
    chapter has (they kept working in an earlier release: `make lab` never overwrites a changed
    notebook, it writes `<chapter>.updated.ipynb` beside it); None when it lacks none, or no release
    of its chapter is here (a hub's or Colab's copy of the course has no notebooks/ folder)."""
    from grader.course import RELEASE, REPO_ROOT
    path = Path(path).resolve()
    # the course's notebooks/ above the workspace the notebook is in (make lab's), else this code's own
    for releases in [Path(releases)] if releases else [*(p / RELEASE for p in path.parents), REPO_ROOT / RELEASE]:
        chapter = path.parent.name if (releases / path.parent.name).is_dir() else next(
            (c.name for c in sorted(releases.glob("*")) if c.is_dir() and path.name.startswith(c.name)), None)
        current = releases / chapter / f"{chapter}.ipynb" if chapter else None
        if current is not None and current.is_file() and current != path:
            break
    else:
        return None
    try:
        lacking = lacking_exercises(path, current)
    except (OSError, ValueError):
        return None
    if not lacking:
        return None
    return (f"{path.name} is an earlier release of {chapter}: it lacks the exercise"
            f"{'s' if len(lacking) > 1 else ''} {', '.join(lacking)}, which would score 0. "
            f"Work in and hand in the current release: `make lab` puts it beside this notebook as "
            f"{chapter}.updated.ipynb, with your answers carried over.")


def running_notebook():
    """The notebook this kernel runs for, where Jupyter's server says, else None.

    jupyter_server starts a notebook's kernel with JPY_SESSION_NAME, the notebook's path (ipykernel
    copies it into `__session__`): absolute in recent servers, relative to the server's root in older
    ones, while the kernel runs in the notebook's folder. A console's session names no notebook, and a
    renamed notebook's kernel keeps the old name: None then, as where no server started the kernel."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    if not session.endswith(".ipynb"):
        return None
    path = Path(session) if os.path.isabs(session) else Path(Path(session).name)
    return path if path.is_file() else None


def check_notebook(path=None, timeout: int = 120) -> None:
    """The chapters' last cell: run the visible tests of the saved notebook and print the table.

    Checks the notebook the cell runs in where the kernel knows it (`running_notebook`), else `path`.
    Returns nothing, so that Jupyter shows the table and no list after it (`report` returns it)."""
    running = running_notebook()
    if running and path and Path(path).resolve() != running.resolve():
        print(f"checking {running.name}, the notebook this cell runs in (not {path})")
    report(running or path, timeout)


def report(path, timeout: int = 120) -> list:
    """Run the visible tests of a saved notebook and print the table; return the results."""
    if os.environ.get("NBGRADER_EXECUTION"):
        # nbgrader is executing this notebook (autograde, validate): grading is the check
        print("self-check skipped: nbgrader is running this notebook")
        return []
    if path is None:
        raise FileNotFoundError("this kernel does not say which notebook it runs in: pass its file name")
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: save the notebook, and pass its file name")
    note = older_release(path)
    if note:
        print(note)
    results = run_checks(path, timeout)
    print(format_table(results))
    if note:
        print(note)   # again under the table, where the eye ends
    return results


def main(path) -> int:
    import nbformat
    try:
        results = report(path)
    except (FileNotFoundError, nbformat.reader.NotJSONError) as err:
        print(f"cannot check {path}: {err}", file=sys.stderr)
        return 2
    return 0 if results and all(r.passed for r in results) else 1
