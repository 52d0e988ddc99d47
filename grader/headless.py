"""Run a notebook's code cells in order, in one namespace, without Jupyter: for a machine that has
torch but no Jupyter (the lent GPU machines), to run the chapters' CUDA paths for real.

    python -m grader.headless solutions/07_fashion_mnist_lab/07_fashion_mnist_lab.ipynb [...]

Cells marked `# NBVAL_SKIP` (the self-check, which needs nbgrader) are skipped; figures are
closed instead of shown. Each cell's printed output follows a line naming the cell, with the
seconds it took, so a long run can be read as it goes. Stops at the first cell that raises.
"""
import json
import os
import sys
import time
from pathlib import Path


def code_cells(path: Path):
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and "# NBVAL_SKIP" not in source:
            yield index, source


def run(path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.show = lambda *args, **kwargs: plt.close("all")

    here = os.getcwd()
    os.chdir(path.parent)            # as Jupyter does: relative paths start at the notebook
    namespace = {"__name__": "__main__"}
    try:
        for index, source in code_cells(path):
            start = time.perf_counter()
            print(f"----- {path.stem} cell {index}", flush=True)
            exec(compile(source, f"{path.stem}[{index}]", "exec"), namespace)
            print(f"----- ({time.perf_counter() - start:.1f} s)", flush=True)
    finally:
        os.chdir(here)


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())  # the course's packages, from the repository root
    for notebook in sys.argv[1:]:
        run(Path(notebook).resolve())
