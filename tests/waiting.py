"""How tests wait: for progress, never against a deadline that a busy machine misses.

A wait ends when its condition holds, and fails at once, saying so, when what it waits on has
stopped (`alive` returns why). HANG_SECONDS only stops a hang: on a 2-core machine running other
gradings beside (load 6 to 50), starts and gradings took minutes where a quiet machine takes
seconds, and a test that gave them a fixed 60 or 180 s failed for it (issue 46). The grades never
depend on this: it only decides how long a test waits for them.
"""
import time

HANG_SECONDS = 900


def wait_until(condition, what: str, alive=None, every: float = 0.2, seconds: float = HANG_SECONDS):
    """condition()'s first true value, polled every `every` s. `alive()`: None while what is waited on
    still runs, else why not (the wait fails at once with it). `what` names what was waited for."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if alive is not None:
            stopped = alive()
            assert stopped is None, f"{what}: {stopped}"
        assert time.monotonic() < deadline, f"{what}: still waiting after {seconds:.0f} s, a hang"
        time.sleep(every)


def process_alive(proc, name: str, log=None):
    """An `alive` for wait_until: None while the subprocess runs, else its exit and its log's tail."""
    def alive():
        if proc.poll() is None:
            return None
        tail = log.read_text(errors="replace")[-3000:] if log is not None and log.exists() else ""
        return f"{name} exited ({proc.returncode})\n{tail}"
    return alive
