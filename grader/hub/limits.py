"""Each person's share of a class's server: memory, CPU and processes, held by Linux cgroups (v1).

`make hub` gives each person a group in the memory, cpu and pids hierarchies, below the hub's own
group: <hub's group>/pytorch-course/<user>. The spawner (grader/hub/spawner.py) makes and sets those groups before it
starts the person's JupyterLab, and the new process joins them before it becomes the person's user
and before it runs anything: the server, every kernel and terminal it starts, and whatever those
fork, are inside from their first instruction. When a person's processes use more memory than the
limit, the kernel's OOM killer stops the largest of them (a kernel, not the small server), and
JupyterLab restarts that kernel; CPU beyond the quota waits; a fork past the process cap fails.

The settings come from a file beside the roster (hub/settings.txt for hub/roster.txt), `name = value`
lines, each optional (`#` starts a comment):

    memory = 2G          # per person: their JupyterLab and all its kernels together
    cpus = 1             # cores' worth of CPU time per person (0.5: half a core)
    processes = 512      # processes and threads per person
    idle_timeout = 60m   # a server unused this long is stopped (files stay); 0: never
    cull_every = 5m      # how often the hub looks for idle servers
    busy_limit = 8h      # a kernel running one cell counts as use for this long (grader/hub/busy_activity.py)
    grading_memory = 4G  # the feedback service's grading, all of it together
    grading_cpu_shares = 128   # its weight for the CPU against the class's 1024: people's servers first
    home_disk = 2G       # each person's home, a filesystem of its own (grader/hub/home_disks.py); 0: none

Where cgroups cannot be used (not root, no cgroup v1 hierarchies, cgroup v2 only, no right to
create groups), `make hub` says why and stops, unless HUB_LIMITS=off: then it starts without limits.

The feedback service (grader/hub/autofeedback.py) grades in a group of its own, beside the class's:
<hub's group>/pytorch-course-grading (GradingGroups, joined by `python -m grader.hub.limits`, which
then runs the service). It has a memory limit, and cpu.shares below the class folder's 1024 but no
quota: when the people's servers want the CPU they get it first, and grading has every cycle they
leave, so that a rush of hand-ins never starves the people's servers nor waits for idle cores.
"""
import argparse
import errno
import os
import sys
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from grader.course import COURSE_ID

HIERARCHIES = ("memory", "cpu", "pids")
SETTINGS_NAME = "settings.txt"    # beside the roster
CFS_PERIOD_US = 100_000
SIZES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class LimitsError(RuntimeError):
    """The limits cannot be set up here; the message says why and what to do."""


@dataclass(frozen=True)
class Settings:
    memory: int = 2 << 30        # bytes
    cpus: float = 1.0
    processes: int = 512
    idle_timeout: int = 3600     # seconds; 0: servers are never stopped for being idle
    cull_every: int = 300        # seconds
    busy_limit: int = 8 * 3600   # seconds a cell that runs keeps its server from being culled
    grading_memory: int = 4 << 30     # bytes, the feedback service's grading (GradingGroups)
    grading_cpu_shares: int = 128     # against the class folder's 1024 (the cgroup default)
    class_memory: int = 0        # bytes for the whole class together; 0: the machine's less grading_memory and 1 GiB
    start_timeout: int = 300     # seconds the hub waits for a server to come up (a class at once on a busy server)
    home_disk: int = 2 << 30     # bytes of each person's home, a filesystem of its own (grader/hub/home_disks.py); 0: none

    def class_memory_limit(self, total: int | None = None) -> int:
        """The class folder's memory limit: what all people's servers may hold together, so that the
        hub, its proxy and the grading keep theirs however many people fill their own."""
        if self.class_memory:
            return self.class_memory
        total = total or os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return max(1 << 30, total - self.grading_memory - (1 << 30))

    def describe(self) -> str:
        minutes = f"{self.idle_timeout / 60:g} min" if self.idle_timeout >= 60 else f"{self.idle_timeout} s"
        idle = f"stopped after {minutes} idle" if self.idle_timeout else "never stopped"
        cores = "core" if self.cpus == 1 else "cores"
        return (f"{self.memory / (1 << 30):g} GiB of memory, {self.cpus:g} {cores}, {self.processes} processes "
                f"per person, {self.class_memory_limit() / (1 << 30):.1f} GiB for the class together; idle servers {idle}")


def parse_size(text: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", text.strip(), re.IGNORECASE)
    if not match:
        raise ValueError(f"{text!r} is not a size (for example 2G or 512M)")
    return int(float(match[1]) * SIZES[match[2].upper()])


def parse_seconds(text: str) -> int:
    match = re.fullmatch(r"(\d+)\s*([smhd]?)", text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a duration (for example 90s, 30m or 1h)")
    return int(match[1]) * SECONDS[match[2]]


PARSERS = {"memory": parse_size, "cpus": float, "processes": int, "idle_timeout": parse_seconds,
           "cull_every": parse_seconds, "busy_limit": parse_seconds, "grading_memory": parse_size, "grading_cpu_shares": int,
           "class_memory": parse_size, "start_timeout": parse_seconds, "home_disk": parse_size}


def settings_path(roster: Path) -> Path:
    return Path(roster).parent / SETTINGS_NAME


def read_settings(roster: Path) -> Settings:
    """The settings file beside the roster (defaults for what it does not say, or if there is none)."""
    path = settings_path(roster)
    if not path.exists():
        return Settings()
    values = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        name, _, value = (part.strip() for part in text.partition("="))
        if name not in PARSERS or not value:
            raise LimitsError(f"{path}, line {number}: expected `name = value` with a name among "
                              f"{', '.join(PARSERS)}, got {line.strip()!r}")
        try:
            values[name] = PARSERS[name](value)
        except ValueError as err:
            raise LimitsError(f"{path}, line {number}: {err}") from None
    settings = Settings(**values)
    if settings.memory < 64 << 20 or settings.cpus <= 0 or settings.processes < 32 or settings.cull_every < 1:
        raise LimitsError(f"{path}: memory must be at least 64M, cpus above 0, processes at least 32 "
                          f"and cull_every at least 1s ({settings})")
    if settings.home_disk and settings.home_disk < 16 << 20:
        raise LimitsError(f"{path}: home_disk must be 0 (homes on the machine's disk) or at least 16M ({settings})")
    if settings.grading_memory < 1 << 30 or not 2 <= settings.grading_cpu_shares <= 262144:
        raise LimitsError(f"{path}: grading_memory must be at least 1G and grading_cpu_shares from 2 to 262144 "
                          f"({settings})")
    return settings


# ---- the cgroup hierarchies ---------------------------------------------------------------------

def _v1_mounts() -> dict:
    """{controller: (mount point, the hierarchy's path mounted there)} for the cgroup v1 mounts."""
    mounts = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        parts, after = left.split(), right.split()
        if len(after) >= 3 and after[0] == "cgroup":
            for option in after[2].split(","):
                mounts.setdefault(option, (Path(parts[4]), parts[3]))
    return mounts


def own_groups(pid: str = "self") -> dict:
    """{controller: this process's group folder} for the memory, cpu and pids hierarchies present."""
    mounts, groups = _v1_mounts(), {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(","):
            if controller in HIERARCHIES and controller in mounts:
                point, root = mounts[controller]
                inside = os.path.relpath(path, root) if path.startswith(root) else None
                if inside is not None and not inside.startswith(".."):
                    groups[controller] = (point / inside).resolve()
    return groups


def class_groups() -> dict:
    """{controller: the class's folder below the hub's own group}."""
    return {name: folder / COURSE_ID for name, folder in own_groups().items()}


def problem() -> str | None:
    """Why per-person limits cannot be used here, or None when they can (a group is made and removed)."""
    if os.geteuid() != 0:
        return "the limits need root (the hub makes a cgroup for each person)"
    groups = class_groups()
    missing = [name for name in HIERARCHIES if name not in groups]
    if missing:
        unified = Path("/sys/fs/cgroup/cgroup.controllers").exists()
        return (f"no cgroup v1 hierarchy for {', '.join(missing)} on this server"
                + (" (it has cgroup v2 only, which make hub's limits do not support yet)" if unified else ""))
    probe = f".probe-{os.getpid()}"
    made = []
    try:
        for name, folder in groups.items():
            folder.mkdir(exist_ok=True)
            (folder / probe).mkdir()
            made.append(folder / probe)
            need = {"memory": "memory.limit_in_bytes", "cpu": "cpu.cfs_quota_us", "pids": "pids.max"}[name]
            if not (folder / probe / need).exists():
                return f"the {name} hierarchy has no {need} (kernel without that controller?)"
    except OSError as err:
        return f"cannot create a cgroup below {groups[name].parent}: {err.strerror}"
    finally:
        for path in made:
            path.rmdir()
    return None


# ---- one person's groups ------------------------------------------------------------------------

def _write(path: Path, value) -> None:
    path.write_text(f"{value}\n")


def limit_class_memory(limit: int, base: dict | None = None) -> None:
    """Set the class folder's memory limit (the people's groups are below it: v1 with
    memory.use_hierarchy, the default, counts them all against it)."""
    folder = (base or class_groups())["memory"]
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / "memory.limit_in_bytes", limit)


class PersonGroups:
    """One person's folder in each hierarchy: <hub's group>/pytorch-course/<user>."""

    def __init__(self, user: str, base: dict | None = None):
        self.user = user
        self.folders = {name: folder / user for name, folder in (base or class_groups()).items()}
        if set(self.folders) != set(HIERARCHIES):
            raise LimitsError(f"no cgroup v1 hierarchy for {', '.join(set(HIERARCHIES) - set(self.folders))}")

    def create(self, memory: int, cpus: float, processes: int) -> None:
        """Make the groups (or reuse them) and set the limits."""
        self._set_memory(memory)
        cpu = self.folders["cpu"]
        _write(cpu / "cpu.cfs_period_us", CFS_PERIOD_US)
        _write(cpu / "cpu.cfs_quota_us", max(1000, int(cpus * CFS_PERIOD_US)))
        _write(self.folders["pids"] / "pids.max", processes)

    def _set_memory(self, memory: int) -> None:
        """Make the groups (or reuse them) and set the memory limit."""
        for folder in self.folders.values():
            folder.mkdir(parents=True, exist_ok=True)
        mem = self.folders["memory"]
        swap = mem / "memory.memsw.limit_in_bytes"      # memory + swap: present when swap accounting is on
        if swap.exists():
            _write(swap, -1)                             # memsw may never be below the memory limit
        _write(mem / "memory.limit_in_bytes", memory)
        if swap.exists():
            _write(swap, memory)                         # swap does not dodge the limit

    def join(self, pid: int = 0) -> None:
        """Move `pid` (0: the calling process) into every group."""
        for folder in self.folders.values():
            with open(folder / "cgroup.procs", "w") as f:
                f.write(f"{pid or os.getpid()}\n")

    def holds(self, pid: int) -> bool:
        """Whether `pid` is in every one of the person's groups."""
        return own_groups(str(pid)) == {name: folder.resolve() for name, folder in self.folders.items()}

    def pids(self) -> set:
        found = set()
        for folder in self.folders.values():
            procs = folder / "cgroup.procs"
            if procs.exists():
                found |= {int(p) for p in procs.read_text().split()}
        return found

    def read(self, hierarchy: str, name: str) -> str:
        return (self.folders[hierarchy] / name).read_text()

    def memory_used(self) -> int:
        return int(self.read("memory", "memory.usage_in_bytes"))

    def oom_kills(self) -> int:
        counts = dict(line.split() for line in self.read("memory", "memory.oom_control").splitlines())
        return int(counts.get("oom_kill", 0))

    def remove(self, kill: bool = False, wait: float = 10) -> bool:
        """Remove the groups; with `kill`, first SIGKILL what is still in them. Returns whether all
        folders are gone (a group that still holds a process stays)."""
        deadline = time.time() + wait
        while kill and self.pids() and time.time() < deadline:
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        gone = True
        for folder in self.folders.values():
            try:
                if folder.exists():
                    folder.rmdir()
            except OSError as err:
                if err.errno != errno.EBUSY:
                    raise
                gone = False
        return gone


# ---- the feedback service's grading -------------------------------------------------------------

GRADING = f"{COURSE_ID}-grading"


class GradingGroups(PersonGroups):
    """The feedback service's group in each hierarchy, beside the class's: <hub's group>/pytorch-course-grading
    (`name`). The service, its Dask workers, their zygotes, warm nbgraders and kernels, all inside."""

    def __init__(self, name: str = GRADING, base: dict | None = None):
        super().__init__(name, base or own_groups())

    def create(self, memory: int, cpu_shares: int) -> None:
        """Make the groups (or reuse them): a memory limit, a CPU weight and no CPU quota."""
        self._set_memory(memory)
        _write(self.folders["cpu"] / "cpu.cfs_quota_us", -1)
        _write(self.folders["cpu"] / "cpu.shares", cpu_shares)


def main(argv=None) -> int:
    """python -m grader.hub.limits [--memory 4G] [--cpu-shares 128] [--group NAME] -- COMMAND...:
    join the grading groups, set as given, then become COMMAND (the hub starts the feedback service so)."""
    parser = argparse.ArgumentParser(prog="python -m grader.hub.limits", description=main.__doc__.split(":\n")[0])
    parser.add_argument("--memory", type=parse_size, default=Settings.grading_memory)
    parser.add_argument("--cpu-shares", type=int, default=Settings.grading_cpu_shares)
    parser.add_argument("--group", default=GRADING, help=f"its name beside the class's (default {GRADING})")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    groups = GradingGroups(args.group)
    groups.create(args.memory, args.cpu_shares)
    groups.join()
    os.execvp(args.command[0], args.command)


if __name__ == "__main__":
    sys.exit(main())
