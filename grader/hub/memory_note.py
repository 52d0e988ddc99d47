"""When the OOM killer stopped a person's kernel, the kernel that replaces it says so, in words.

JupyterLab only says that the kernel "appears to have died". On the hub each person's processes share
one memory cgroup (grader/hub/limits.py), whose `memory.oom_control` counts the processes the kernel's
OOM killer stopped there. Every kernel of the students' environment runs `install` at start (an
IPython startup file that `make hub` writes into the environment): it compares that count with the
one the person's previous kernel saw (kept in ~/.local/state/), and if it grew, the first cell the
person runs prints what happened and what to do. Only a kernel inside its own person's group does
anything: graded kernels and kernels outside the hub stay silent.
"""
import os
import pwd
from pathlib import Path

from grader.course import COURSE_ID

SEEN = Path(".local") / "state" / COURSE_ID / "oom-kills-seen"
NOTE = ("Your kernel was restarted: together, your notebooks used more than the {limit} of memory each "
        "person has on this server, and the server stopped the largest of them. Every variable of that "
        "notebook is gone: run it again from the top, with a smaller batch or model, and shut down the "
        "kernels you are not using (the Running Terminals and Kernels tab).\n")


def _person_group() -> Path | None:
    """This process's memory group, if it is the group of the person running it."""
    from grader.hub.limits import own_groups
    group = own_groups().get("memory")
    me = pwd.getpwuid(os.getuid()).pw_name
    if group is None or group.name != me or group.parent.name != COURSE_ID:
        return None
    return group


def _oom_kills(group: Path) -> int:
    counts = dict(line.split() for line in (group / "memory.oom_control").read_text().splitlines())
    return int(counts.get("oom_kill", 0))


def _size(n: int) -> str:
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def pending_note(home: Path | None = None) -> str | None:
    """The note to show, if this person's processes were OOM-killed since their last kernel started;
    remembers the count either way."""
    group = _person_group()
    if group is None:
        return None
    now = _oom_kills(group)
    seen_file = Path(home or Path.home()) / SEEN
    try:
        seen = int(seen_file.read_text())
    except (OSError, ValueError):
        seen = now   # the first kernel this person ever started: nothing to report
    seen_file.parent.mkdir(parents=True, exist_ok=True)
    seen_file.write_text(str(now))
    if now <= seen:
        return None
    return NOTE.format(limit=_size(int((group / "memory.limit_in_bytes").read_text())))


def install(shell) -> None:
    """Print the note, if there is one, before the first cell this kernel runs. Never fails the kernel."""
    try:
        note = pending_note()
    except Exception:   # a missing file, an odd /proc: no note is better than a kernel that will not start
        return
    if not note or shell is None:
        return

    def tell(*_):
        print(note, flush=True)
        shell.events.unregister("pre_run_cell", tell)
    shell.events.register("pre_run_cell", tell)


STARTUP_FILE = ("# Written by make hub: a kernel restarted for using too much memory says so (grader/hub/memory_note.py)\n"
                "__import__('grader.hub.memory_note', fromlist=['install']).install(get_ipython())  # noqa: F821\n")
