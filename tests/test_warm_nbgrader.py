"""The warm nbgrader of a grading worker (grader/class_grading/warm_nbgrader.py): nbgrader's own
command line in a fork of a process that imported it once; a run past its time is killed and the
server goes on serving."""
import time

from grader.class_grading.warm_nbgrader import WarmNbgrader
from grader.course import tool_env


def test_runs_nbgrader_and_stops_a_run_past_its_time(tmp_path):
    server = WarmNbgrader(tool_env())
    try:
        assert server.run(["--version"], tmp_path, tool_env(), tmp_path / "log", timeout=60) == 0
        assert "nbgrader version" in (tmp_path / "log").read_text()

        stuck = tmp_path / "stuck"
        stuck.mkdir()
        (stuck / "nbgrader_config.py").write_text("import time\ntime.sleep(600)\n")   # nbgrader loads it first
        start = time.perf_counter()
        assert server.run(["autograde", "ps1"], stuck, tool_env(), stuck / "log", timeout=3) == 124
        assert time.perf_counter() - start < 30

        (tmp_path / "bad").mkdir()
        code = server.run(["autograde", "ps1"], tmp_path / "bad", tool_env(), tmp_path / "bad" / "log", timeout=120)
        assert code != 0, "no course here: nbgrader fails, and says why"
        assert "error" in (tmp_path / "bad" / "log").read_text().lower()
        assert server.alive()
    finally:
        server.stop()
