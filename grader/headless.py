"""Run a notebook's code cells in order, in one namespace, without Jupyter: for a machine that has
torch but no Jupyter or nbgrader (the lent GPU machines), to run the chapters' CUDA paths for real.

    python -m grader.headless [--keep-going] [--records DIR] solutions/07_fashion_mnist_lab/07_fashion_mnist_lab.ipynb [...]

Cells marked `# NBVAL_SKIP` (the self-check, which needs nbgrader) are skipped; figures are
closed instead of shown. Each cell's printed output follows a line naming the cell, with the
seconds it took, so a long run can be read as it goes. Each cell's source is registered with
linecache as IPython does, so `inspect.getsource` finds a function a cell defined.

Without --keep-going the run stops at the first cell that raises (exit status 1). With it, a
failing cell's traceback is printed and the run goes on, as a student's Run All past an error
would not, so that one broken cell does not hide the rest of a chapter.

--records DIR: after the notebook, every judged test cell's hidden checks run in the notebook's
namespace, as the grader's probe runs them in a kernel (grader/judge/probe_kernel.py, same source,
same seed for a given chapter and exercise), and DIR/<notebook>.records.json gets the probe
records; DIR/<notebook>.cells.jsonl gets one line per cell as it ends (index, ok, seconds, error),
written as it goes so that a run killed by a timeout still says how far it came. grader.gpu_check
compares the records of a run on a GPU with those of a run on the CPU.

--cpus 0,1,2,3: the run and everything it starts stay on these CPUs (Linux only).
"""
import argparse
import json
import linecache
import os
import sys
import time
import traceback
import types
from pathlib import Path


def code_cells(path: Path):
    """(index, source) of the code cells that run, with each cell's nbgrader metadata."""
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and "# NBVAL_SKIP" not in source:
            yield index, source, cell.get("metadata", {}).get("nbgrader", {})


def _cell_filename(path: Path, index: int) -> str:
    return f"{path.stem}[{index}]"


def _run_cell(path: Path, index: int, source: str, namespace: dict) -> None:
    filename = _cell_filename(path, index)
    # as IPython does: inspect.getsource of a function defined here finds this cell, not the runner
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)


def _show_closes_figures():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.show = lambda *args, **kwargs: plt.close("all")


def run(path: Path, keep_going: bool = False, cells_log: Path | None = None) -> tuple:
    """Run the notebook's cells; return (namespace, [{"index", "ok", "seconds", "error"}, ...]).
    Without keep_going, the first failing cell's exception propagates."""
    _show_closes_figures()
    here = os.getcwd()
    os.chdir(path.parent)            # as Jupyter does: relative paths start at the notebook
    namespace = {"__name__": "__main__"}
    results = []
    try:
        for index, source, _ in code_cells(path):
            start = time.perf_counter()
            print(f"----- {path.stem} cell {index}", flush=True)
            error = None
            try:
                _run_cell(path, index, source, namespace)
            except BaseException as err:   # KeyboardInterrupt and SystemExit in a cell included
                if not keep_going or isinstance(err, KeyboardInterrupt):
                    raise
                traceback.print_exc()
                error = f"{type(err).__name__}: {err}".splitlines()[0][:300]
            seconds = time.perf_counter() - start
            print(f"----- ({seconds:.1f} s){' FAILED' if error else ''}", flush=True)
            results.append({"index": index, "ok": error is None, "seconds": round(seconds, 2), "error": error})
            if cells_log is not None:
                with open(cells_log, "a") as log:
                    log.write(json.dumps(results[-1]) + "\n")
    finally:
        os.chdir(here)
    return namespace, results


def _capturing_ipython(outputs: list) -> dict:
    """sys.modules entries under which the probe's `from IPython.display import display` appends
    to `outputs` what a kernel would send as display data (IPython itself may not be installed)."""
    def display(*objects, raw=False, **kwargs):
        outputs.extend({"output_type": "display_data", "data": obj} for obj in objects)
    package = types.ModuleType("IPython")
    package.display = types.ModuleType("IPython.display")
    package.display.display = display
    return {"IPython": package, "IPython.display": package.display}


def probe_seed(chapter: str, grade_id: str) -> int:
    """The seed of a check run's hidden inputs: the same on every machine, for every run."""
    from grader.judge.probes import student_seed
    return student_seed(chapter, chapter, "gpu-check", grade_id)


def probe_outputs(path: Path, namespace: dict) -> dict:
    """{test cell's grade id: the display outputs its probe sent}, run in `namespace` after the notebook."""
    from grader.judge.probes import probe_section, probe_source
    found = {}
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        for index, source, nbgrader in code_cells(path):
            hidden = probe_section(source) if nbgrader.get("grade") else None
            if hidden is None:
                continue
            grade_id = nbgrader["grade_id"]
            outputs = []
            print(f"----- {path.stem} hidden checks of {grade_id}", flush=True)
            # only these two entries are swapped: what the probe imports meanwhile (torch._dynamo) stays
            fakes = _capturing_ipython(outputs)
            saved = {name: sys.modules.get(name) for name in fakes}
            sys.modules.update(fakes)
            try:
                _run_cell(path, index, probe_source(hidden, probe_seed(path.stem, grade_id), grade_id), namespace)
            except BaseException:   # the probe reports its own errors; this is the probe breaking
                traceback.print_exc()
            finally:
                for name, module in saved.items():
                    if module is None:
                        sys.modules.pop(name, None)
                    else:
                        sys.modules[name] = module
            found[grade_id] = outputs
    finally:
        os.chdir(here)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--keep-going", action="store_true", help="a failing cell is reported and the run goes on")
    parser.add_argument("--records", type=Path, help="folder for the cells' log and the hidden checks' records")
    parser.add_argument("--cpus", type=lambda text: {int(c) for c in text.split(",")},
                        help="run on these CPUs only, e.g. 0,1,2,3 (Linux): grader.gpu_check keeps its CPU "
                             "runs off the cores of its device runs")
    args = parser.parse_args(argv)
    if args.cpus:
        os.sched_setaffinity(0, args.cpus)   # before torch starts its threads; children inherit it
    sys.path.insert(0, os.getcwd())  # the course's packages, from the repository root
    failed = False
    for notebook in args.notebooks:
        path = notebook.resolve()
        cells_log = None
        if args.records:
            args.records.mkdir(parents=True, exist_ok=True)
            cells_log = args.records / f"{path.stem}.cells.jsonl"
            cells_log.write_text("")
        namespace, results = run(path, keep_going=args.keep_going, cells_log=cells_log)
        failed = failed or not all(r["ok"] for r in results)
        if args.records:
            records = probe_outputs(path, namespace)
            (args.records / f"{path.stem}.records.json").write_text(json.dumps(records))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
