"""grader.headless runs a notebook's code cells without Jupyter (the GPU machines have none):
in order, in one namespace, from the notebook's folder, skipping what nbval skips."""
import subprocess
import sys
from pathlib import Path

from grader.authoring import code, md, write_notebook

ROOT = Path(__file__).resolve().parents[1]


def test_cells_run_in_order_in_one_namespace_and_a_failing_cell_stops_the_run(tmp_path):
    (tmp_path / "beside.txt").write_text("read from beside the notebook")
    demo = write_notebook([
        md("# prose is not run"),
        code("import matplotlib.pyplot as plt\nvalue = 41"),
        code("# NBVAL_SKIP\nraise SystemExit('a skipped cell ran')"),
        code("plt.plot([1, 2])\nplt.show()\nprint('value', value + 1)"),
        code("from pathlib import Path\nprint(Path('beside.txt').read_text())"),
        code("import torchcourse\nprint('package from', Path(torchcourse.__file__).parent.parent.name)"),
    ], tmp_path / "demo.ipynb")
    broken = write_notebook([code("print('first')"), code("1 / 0"), code("print('never')")],
                            tmp_path / "broken.ipynb")
    done = subprocess.run([sys.executable, "-m", "grader.headless", str(demo), str(broken)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert "value 42" in lines and "read from beside the notebook" in lines, done.stdout + done.stderr
    assert f"package from {ROOT.name}" in lines
    assert "a skipped cell ran" not in done.stdout + done.stderr
    assert [line.split()[-1] for line in lines if line.startswith("----- demo cell")] == ["1", "3", "4", "5"]
    # the broken notebook: its first cell ran, the failing one stopped the run with its traceback
    assert done.returncode != 0 and "first" in lines and "never" not in lines
    assert "ZeroDivisionError" in done.stderr and "broken[1]" in done.stderr
