"""A warm nbgrader: a process that imports nbgrader and the course's pipeline once (torch included,
3.5 s), then forks one `nbgrader autograde` per request, which runs nbgrader's own command line. A
Dask worker keeps one for all its batches, as it keeps a zygote for its kernels. It never runs
student code: its forks start walled kernels, as nbgrader does. docs/GRADING.md, "How parallel
grading works".
"""
import json
import os
import signal
import socket
import subprocess
import sys
import traceback

from grader.wall import fork_server

# what `nbgrader autograde` with the course's nbgrader_config.py imports
PRELOAD = ("nbgrader.apps.nbgraderapp", "nbgrader.apps.autogradeapp", "nbgrader.converters.autograde",
           "nbgrader.preprocessors", "nbconvert.preprocessors", "grader.pipeline", "grader.judge.preprocessor",
           "grader.wall.execute", "grader.preprocessors.deduplicate_ids", "grader.preprocessors.restore_test_cells",
           "grader.preprocessors.strip_hidden_tests", "grader.preprocessors.flag_for_manual_grading",
           "grader.preprocessors.mark_kernel_decided")


class WarmNbgrader:
    """The worker's side: start the server, ask it to run nbgrader, stop a run past its time."""

    def __init__(self, env: dict, pass_fds=()):
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen([sys.executable, "-m", "grader.class_grading.warm_nbgrader", str(theirs.fileno())],
                                        pass_fds=[theirs.fileno(), *pass_fds], env=env, stdin=subprocess.DEVNULL)
        theirs.close()
        self.channel = ours
        self.replies = ours.makefile("r")
        self.ready = None   # known at the first run: True once the server said so

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, argv: list, cwd, env: dict, log, timeout: float | None) -> int:
        """nbgrader's exit status for `nbgrader <argv>` run in `cwd` with `env`, its output in `log`;
        124 when it ran past `timeout` seconds (it is then killed)."""
        self.channel.settimeout(None)
        if self.ready is None:
            self.ready = json.loads(self.replies.readline() or "{}").get("ready", False)
        if not self.ready:
            raise RuntimeError("the warm nbgrader did not start")
        self.channel.sendall(json.dumps({"argv": argv, "cwd": str(cwd), "env": env, "log": str(log)}).encode() + b"\n")
        pid = json.loads(self.replies.readline())["pid"]
        self.channel.settimeout(timeout)
        try:
            return json.loads(self.replies.readline())["code"]
        except (TimeoutError, socket.timeout):
            os.kill(pid, signal.SIGKILL)
            self.channel.settimeout(None)
            self.replies = self.channel.makefile("r")   # a reader that timed out reads no more
            self.replies.readline()   # the server's word that it has reaped it
            return 124

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def _run_nbgrader(request: dict) -> None:
    """In the fork: become `nbgrader <argv>` (does not return)."""
    fork_server.die_with_parent()   # with the server
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
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
