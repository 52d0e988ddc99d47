"""What the feedback service's grading takes from students who are working during a rush: a benchmark.

    python tests/bench_grading_share.py [--students 2] [--handins 8] [--rounds 3]

As on a class's server (`make hub`, grader/hub/limits.py): `--students` people train flat out, each a
single-threaded loop in their own groups with the hub's default limits (one core each), while
`make autograde`'s code grades `--handins` hand-ins of 05_training_loop inside the feedback service's
grading groups, beside the class's. The grading group's CPU weight (cpu.shares) alternates, round by
round, between the hub's default (Settings.grading_cpu_shares, 128) and a person's weight (1024, the
cgroup default, which the class's folder has). Before each grading the students work alone for a
while: their rate then is the baseline of that round.

Prints each round, then per weight the median and range over rounds of: the students' work rate while
the hand-ins were graded, as a share of their rate alone, and the grading's wall time. Needs root and
cgroup v1 (as `make hub`'s limits); the groups it makes are removed. A benchmark, not a test: run it
on an otherwise idle machine.
"""
import argparse
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.hub import limits
from grader.release import release

sys.path.insert(0, str(Path(__file__).parent))
from bench_grading import build_class  # noqa: E402
from submissions import copy_course  # noqa: E402

ASSIGNMENT = "05_training_loop"
PREFIX = "ctgs"
PERSON = 1024           # a person's weight: the class folder's cpu.shares (the cgroup default)
ALONE_SECONDS = 8       # the students' baseline before each grading


def work(groups: limits.PersonGroups, done) -> None:
    """A student training flat out, in their groups: count chunks of pure-Python work."""
    groups.join()
    while True:
        total = 0
        for i in range(20_000):
            total += i * i
        with done.get_lock():
            done.value += 1


def rate(counters, seconds: float) -> float:
    """Chunks per second, summed over the students, counted over `seconds` from now."""
    before = sum(c.value for c in counters)
    time.sleep(seconds)
    return (sum(c.value for c in counters) - before) / seconds


def grade(course: Path, group: str, shares: int, counters) -> tuple:
    """Grade every hand-in of `course` in the grading groups at `shares`; (wall seconds, the
    students' rate meanwhile)."""
    before, started = sum(c.value for c in counters), time.perf_counter()
    code = ("import sys; from grader.class_grading.autograde import autograde_all; "
            f"sys.exit(autograde_all(course={str(course)!r}, progress=False))")
    subprocess.run([sys.executable, "-m", "grader.hub.limits", f"--group={group}", f"--cpu-shares={shares}",
                    "--", sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    return seconds, (sum(c.value for c in counters) - before) / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=2)
    parser.add_argument("--handins", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if os.geteuid() != 0 or limits.problem():
        sys.exit(f"needs the hub's cgroups: {limits.problem() or 'run as root'}")
    default = limits.Settings()
    weights = (default.grading_cpu_shares, PERSON)
    group = f"{limits.GRADING}-bench-{os.getpid()}"
    people = [limits.PersonGroups(f"{PREFIX}-s{i}") for i in range(args.students)]
    for person in people:
        person.create(default.memory, default.cpus, default.processes)
    counters = [multiprocessing.Value("q", 0) for _ in people]
    workers = [multiprocessing.Process(target=work, args=(p, c), daemon=True) for p, c in zip(people, counters)]
    results = {w: [] for w in weights}
    with tempfile.TemporaryDirectory(prefix="bench-share-") as tmp:
        base = copy_course(Path(tmp) / "base")
        release([ASSIGNMENT], course=base)
        build_class(base, ASSIGNMENT, args.handins)
        try:
            for worker in workers:
                worker.start()
            print(f"{args.students} students at {default.cpus:g} core each, {args.handins} hand-ins of {ASSIGNMENT} "
                  f"graded per round, on {os.cpu_count()} cores", flush=True)
            for r in range(args.rounds):
                for shares in (weights if r % 2 == 0 else weights[::-1]):   # alternate which goes first
                    course = Path(tmp) / f"round-{r}-{shares}"
                    shutil.copytree(base, course)
                    alone = rate(counters, ALONE_SECONDS)
                    seconds, during = grade(course, group, shares, counters)
                    results[shares].append((during / alone, seconds))
                    print(f"round {r + 1}, grading at cpu.shares {shares:4d}: graded in {seconds:5.1f} s; the students "
                          f"worked at {100 * during / alone:3.0f}% of their rate alone ({alone:.0f} chunks/s)", flush=True)
                    shutil.rmtree(course)
        finally:
            for worker in workers:
                worker.kill()
                worker.join()
            for groups in (*people, limits.GradingGroups(group)):
                groups.remove(kill=True)
    for shares, runs in results.items():
        share = [100 * s for s, _ in runs]
        wall = [w for _, w in runs]
        print(f"cpu.shares {shares:4d}: students at {statistics.median(share):.0f}% of their rate alone "
              f"({min(share):.0f}-{max(share):.0f}%), grading {statistics.median(wall):.1f} s "
              f"({min(wall):.1f}-{max(wall):.1f} s), median (range) of {len(runs)} rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
