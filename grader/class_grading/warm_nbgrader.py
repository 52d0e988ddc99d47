"""A warm nbgrader: a process that imports nbgrader and the course's pipeline once (torch included,
3.5 s), then forks one `nbgrader autograde` per request, which runs nbgrader's own command line. A
Dask worker keeps one for all its batches, and its threads each connect to it (a fork server,
grader/wall/fork_server.py), as they do to its zygote. It never runs student code: its forks start
walled kernels, as nbgrader does. docs/GRADING.md, "How parallel grading works". The test suite
runs its nbgrader commands and API scripts through one too (grader/course.py, `warm`).
"""
import json
import os
import signal
import socket
import sys
import traceback

from grader.wall import fork_server


def preload_schema_version() -> None:
    """The gradebook schema's version, read once for every fork (grader/gradebook_schema.py)."""
    from grader import gradebook_schema
    gradebook_schema.install()
    gradebook_schema.alembic_head()


def warm_html_rendering() -> None:
    """Render a tiny notebook to HTML, as generate_feedback renders each student's: what the first
    rendering builds (pygments' lexer tables, soupsieve's selectors, the regular expressions behind
    them; kept by their modules) is then built once here rather than in every fork. Measured on
    one student's feedback of 01_tensors, forked: 1.03 CPU-s before, 0.58 after (medians of 3, 2026-11-30)."""
    import nbformat
    from nbconvert.exporters import HTMLExporter
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("A *sentence*, `code` and $x^2$."),
        nbformat.v4.new_code_cell("import torch\nprint(torch.ones(2) @ torch.ones(2))  # a comment",
                                  outputs=[nbformat.v4.new_output("stream", name="stdout", text="tensor(2.)\n")])])
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    HTMLExporter(template_name="classic").from_notebook_node(nb)


# what `nbgrader autograde`, `generate_feedback` and the course's other commands import, with the
# course's nbgrader_config.py, and the gradebook's database driver, which SQLAlchemy imports at the
# first connection: with these and the rendering above, a fork's `nbgrader db student add` took
# 0.075 CPU-s, 0.24 without (3 rounds, alternated)
PRELOAD = (preload_schema_version, "nbgrader.apps.nbgraderapp", "nbgrader.apps.autogradeapp", "nbgrader.converters.autograde",
           "nbgrader.preprocessors", "nbconvert.preprocessors", "grader.pipeline", "grader.judge.preprocessor",
           "grader.wall.execute", "grader.preprocessors.deduplicate_ids", "grader.preprocessors.restore_test_cells",
           "grader.preprocessors.strip_hidden_tests", "grader.preprocessors.flag_for_manual_grading",
           "grader.preprocessors.mark_kernel_decided", "grader.gated_collect", "grader.inbound", "grader.feedback",
           "sqlalchemy.dialects.sqlite", warm_html_rendering)


class WarmNbgrader:
    """The worker's side: start the server, ask it to run nbgrader, stop a run past its time. Any
    number of threads may run nbgrader through one at once: each run has a connection of its own."""

    def __init__(self, env: dict):
        """Start a server with `env`; it dies with the thread that started it."""
        self.server = fork_server.Server([sys.executable, "-m", "grader.class_grading.warm_nbgrader"], env)
        self.path = self.server.path

    def alive(self) -> bool:
        return self.server.alive()

    def run(self, argv: list, cwd, env: dict, log, timeout: float | None, script: str | None = None,
            errors=None) -> int:
        """nbgrader's exit status for `nbgrader <argv>` run in `cwd` with `env`, its output in `log`
        (its stderr in `errors` if given); 124 when it ran past `timeout` seconds (it is then killed).
        With `script`, that Python source runs instead, as `python -c script *argv` would."""
        request = {"argv": argv, "cwd": str(cwd), "env": env, "log": str(log), "script": script,
                   "errors": str(errors or log)}
        with fork_server.connect(self.path) as channel:
            replies = channel.makefile("r")
            channel.sendall(json.dumps(request).encode() + b"\n")
            started = replies.readline()   # once the server has imported nbgrader
            if not started:
                raise RuntimeError("the warm nbgrader stopped or did not start")
            pid = json.loads(started)["pid"]
            channel.settimeout(timeout)
            try:
                ended = replies.readline()
            except (TimeoutError, socket.timeout):
                os.kill(pid, signal.SIGKILL)   # its handler reaps it, then ends with our connection
                return 124
            if not ended:
                raise RuntimeError("the warm nbgrader stopped while nbgrader ran")
            return json.loads(ended)["code"]

    def stop(self) -> None:
        self.server.stop()


def _run_nbgrader(request: dict) -> None:
    """In the fork: become `nbgrader <argv>`, or `python -c <script> <argv>` (does not return)."""
    fork_server.die_with_parent()   # with the server
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        errors = request.get("errors") or request["log"]
        os.dup2(log, 1)
        os.dup2(log if errors == request["log"] else os.open(errors, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
        sys.path.insert(0, "")     # the working folder first, as `python -m` and `python -c` have it
        if request.get("script") is not None:
            sys.argv = ["-c", *request["argv"]]
            exec(compile(request["script"], "<string>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = ["nbgrader", *request["argv"]]
            from nbgrader.apps.nbgraderapp import main
            main()
        code = 0
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    fork_server.serve(int(sys.argv[1]), PRELOAD, _run_nbgrader, wait=True)
