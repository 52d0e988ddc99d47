"""Seconds from Submit to fetchable feedback, with the feedback service running as a process of its
own, polling, as the hub runs it (grader/hub/autofeedback.py).

    .venv/bin/python tests/bench_feedback.py [--handins 3] [--interval 2]
    .venv/bin/python tests/bench_feedback.py --rush 30 [--within 60]     (make bench-feedback STUDENTS=30)
    .venv/bin/python tests/bench_feedback.py --rush 30 --within 0        (make bench-feedback WITHIN=0: all at once)
    .venv/bin/python tests/bench_feedback.py --rush 30 --within 0 --cli  (make bench-feedback WITHIN=0 CLI=1)

1. copies the course to a temporary folder and releases 00_setup into its exchange;
2. starts `python -m grader.hub.autofeedback --course COPY --interval 2` and waits until it watches;
3. hands in the chapter's reference solution as a new student, one after another; for each, times
   from the start of `nbgrader submit` until the feedback is where `nbgrader fetch_feedback` finds it
   (the released file named by the hand-in's secret), then fetches it and checks its score;
4. prints each time, the load average and the CPU that other processes used meanwhile (a shared
   machine), then the median as its last line. The first hand-in comes right after the service
   started, while its workers still warm up (each keeps a zygote and a warm nbgrader).

--rush N, the deadline rush: N students hand in 05_training_loop within --within seconds (one every
within/N s; --within 0: all N at the same moment), each from a process of its own started before the
rush with nbgrader imported, as the Submit button hands in inside a student's running server
(tests/submissions.py, StudentServer; --cli: a cold `nbgrader submit` each, whose imports cost about a
CPU-second apiece while the service grades), a class as tests/bench_grading.py makes it
(the reference, the untouched release, the answer sets and mixes of them, so that scores differ). It
times each from the start of its Submit to its released feedback, and checks that each was graded
once (one line in the attempts history) with the score that `make autograde`'s code gives the same
notebooks; then it times that code (autograde_all, with a cluster of its own, as `make autograde`)
grading the same N hand-ins in a fresh copy of the course. It prints each hand-in, then the first,
the median and the last, the autograde time, and whether the first came within 60 s and the last
within the autograde time plus 30 s. A benchmark, not a test: on a shared machine, read the load.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import psutil

from grader.release import release
from submissions import ExchangeStudent, StudentServer, copy_course, solution_copy, submission_path

ASSIGNMENT = "00_setup"
RUSH = "05_training_loop"
TARGET_SECONDS = 60
RUSH_SLACK = 30   # the rush's last feedback within autograde_all's time for the same hand-ins plus this
SCORE = re.compile(r"Score: ([\d.]+) / ([\d.]+)")


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f} on {} cores".format(*os.getloadavg(), os.cpu_count())


class OthersCpu:
    """CPU seconds that processes outside this benchmark's own tree use while it runs (other people's
    work on a shared machine), sampled every second; a process that starts and ends between two
    samples is missed, so it is a lower bound."""

    def __init__(self):
        self.seen, self.others, self.started = {}, 0.0, time.perf_counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.wait(1.0):
            self.sample()

    def sample(self):
        me = psutil.Process()
        ours = {me.pid, *(child.pid for child in me.children(recursive=True))}
        for proc in psutil.process_iter(["cpu_times"]):
            times = proc.info["cpu_times"]
            if times is None:
                continue
            total, key = times.user + times.system, (proc.pid, proc.create_time())
            if key in self.seen and proc.pid not in ours:
                self.others += total - self.seen[key]
            self.seen[key] = total

    def report(self) -> str:
        self.stop.set()
        self.thread.join()
        seconds = time.perf_counter() - self.started
        return (f"other processes used {self.others:.0f} CPU-s in {seconds:.0f} s "
                f"({100 * self.others / seconds / os.cpu_count():.0f}% of {os.cpu_count()} cores)")


def start_service(course: Path, interval: float, group: str | None = None) -> subprocess.Popen:
    """The service, as `make hub` starts it: in the grading cgroups named `group` (grader/hub/limits.py,
    the hub's default limits) when given."""
    command = [sys.executable, "-m", "grader.hub.autofeedback", "--course", str(course), "--interval", str(interval)]
    if group:
        command = [sys.executable, "-m", "grader.hub.limits", f"--group={group}", "--", *command]
    service = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = service.stdout.readline()
    if "watching" not in line:
        sys.exit(f"the service did not start: {line!r}")
    return service


def submit_to_feedback(course: Path, student: ExchangeStudent, timeout: float = 600) -> float:
    """Seconds from the start of `nbgrader submit` to the released feedback."""
    started = time.perf_counter()
    student.submit(ASSIGNMENT, {f"{ASSIGNMENT}.ipynb": solution_copy(ASSIGNMENT, course)})
    released = student.released_feedback(ASSIGNMENT, ASSIGNMENT)
    while not released.exists():
        if time.perf_counter() - started > timeout:
            sys.exit(f"no feedback for {student.name} after {timeout} s")
        time.sleep(0.1)
    return time.perf_counter() - started


def rush(students: int, within: float, interval: float, cli: bool = False) -> int:
    """The deadline rush (see the module's doc); returns 0 when both targets hold and every score is right."""
    from concurrent.futures import ThreadPoolExecutor
    from bench_grading import build_class
    from grader.class_grading.autograde import autograde_all
    from grader.hub.autofeedback import ATTEMPTS, STATE, points_of
    warnings.filterwarnings("ignore", message="Object of type")   # nbgrader's gradebook, read while written
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as tmp:
        tmp = Path(tmp)
        course, fresh = copy_course(tmp / "course"), copy_course(tmp / "fresh")
        release([RUSH], course=course)
        release([RUSH], course=fresh)
        names = build_class(fresh, RUSH, students)   # in fresh's submitted/, for autograde below
        print(load(), "before", flush=True)
        others = OthersCpu()
        from grader.hub import limits
        group = None if os.geteuid() or limits.problem() else f"{limits.GRADING}-bench-{os.getpid()}"
        default = limits.Settings()
        print(f"the service in the grading cgroups, with the hub's default limits ({default.grading_memory >> 30} GiB, "
              f"cpu.shares {default.grading_cpu_shares})" if group else
              f"the service without cgroups ({limits.problem() or 'not root'})", flush=True)
        service = start_service(course, interval, group)
        started, feedback, problems, servers = {}, {}, [], {}

        homes = {name: ExchangeStudent(course, name, tmp / "homes" / name) for name in names}
        if not cli:   # every student's server up, nbgrader imported, before the moment, as on a hub
            with ThreadPoolExecutor(4) as pool:
                servers = dict(zip(names, pool.map(StudentServer, homes.values())))

        def hand_in(i: int, name: str) -> None:
            time.sleep(max(0.0, t0 + i * within / students - time.perf_counter()))
            student = homes[name]
            started[name] = time.perf_counter()
            (student if cli else servers[name]).submit(RUSH, {f"{RUSH}.ipynb": submission_path(fresh, name, RUSH)
                                                              .read_bytes()})
            released = student.released_feedback(RUSH, RUSH)
            while not released.exists():
                if time.perf_counter() - started[name] > 1800:
                    problems.append(f"{name}: no feedback after 1800 s")
                    return
                time.sleep(0.2)
            feedback[name] = time.perf_counter() - started[name]
            time.sleep(0.5)   # release_feedback copies the page: let it finish before it is read
            score = SCORE.search(released.read_text())
            print(f"{name}: {feedback[name]:6.1f} s from Submit to fetchable feedback "
                  f"({score and score.group(0)}); {load()}", flush=True)

        try:
            t0 = time.perf_counter()
            with ThreadPoolExecutor(students) as pool:
                list(pool.map(hand_in, range(students), names))
            submitted = max(started.values()) - t0
        finally:
            for server in servers.values():
                server.close()
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=120)
            if group:
                groups = limits.GradingGroups(group)
                peak = int(groups.read("memory", "memory.max_usage_in_bytes")) / (1 << 30)
                print(f"the service's grading used at most {peak:.2f} GiB of memory, "
                      f"{groups.oom_kills()} OOM kills", flush=True)
                groups.remove(kill=True)
        print(others.report(), flush=True)
        print(f"{students} hand-ins of {RUSH} submitted within {submitted:.0f} s, "
              f"{'each by a cold `nbgrader submit`' if cli else 'each in its running server'}", flush=True)

        others = OthersCpu()
        began = time.perf_counter()
        code = autograde_all(course=fresh, progress=False)
        autograde = time.perf_counter() - began
        print(f"autograde_all (make autograde's code, a cluster of its own) graded the same {students} hand-ins "
              f"in {autograde:.1f} s (exit {code}); {load()}; {others.report()}", flush=True)

        # each graded once, with the score that autograde gives the same notebook
        attempts = [json.loads(line) for line in (course / STATE / ATTEMPTS).read_text().splitlines()]
        counts = {name: sum(a["student"] == name for a in attempts) for name in names}
        problems += [f"{name}: {n} lines in the attempts history" for name, n in counts.items() if n != 1]
        for name in names:
            want = points_of(fresh, name, RUSH)[:2]
            got = points_of(course, name, RUSH)[:2]
            page = SCORE.search(ExchangeStudent(course, name, tmp / "homes" / name).released_feedback(RUSH, RUSH)
                                .read_text())
            shown = tuple(float(g) for g in page.groups()) if page else None
            if not (got == want and shown == tuple(float(w) for w in want)):
                problems.append(f"{name}: gradebook {got}, page {shown}, autograde {want}")
    times = sorted(feedback.values())
    for problem in problems:
        print("PROBLEM", problem)
    if len(times) < students:
        return 1
    first_ok, last_ok = times[0] <= TARGET_SECONDS, times[-1] <= autograde + RUSH_SLACK
    print(f"first {times[0]:.1f} s (within {TARGET_SECONDS} s: {'yes' if first_ok else 'NO'}), "
          f"last {times[-1]:.1f} s (within autograde {autograde:.1f} s + {RUSH_SLACK} s: "
          f"{'yes' if last_ok else 'NO'}); {len(problems)} problems")
    print(f"median {statistics.median(times):.1f} s, last {times[-1]:.1f} s from Submit to fetchable feedback, "
          f"{students} hand-ins of {RUSH} within {within:g} s; {load()}")
    return 0 if first_ok and last_ok and not problems else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--handins", type=int, default=3)
    parser.add_argument("--interval", type=float, default=2.0, help="the service's polling interval (default 2 s)")
    parser.add_argument("--rush", type=int, metavar="N", help=f"N students hand in {RUSH} at once (see above)")
    parser.add_argument("--within", type=float, default=60.0,
                        help="the rush's hand-ins spread over these seconds (0: all at the same moment)")
    parser.add_argument("--cli", action="store_true",
                        help="the rush's hand-ins each by a cold `nbgrader submit` process (default: in each "
                             "student's server, started before, as the hub's Submit button does)")
    args = parser.parse_args()
    os.environ.setdefault("COURSE_OFFLINE", "1")   # as `make test`: no kernel tries the network
    if args.rush:
        return rush(args.rush, args.within, args.interval, args.cli)
    with tempfile.TemporaryDirectory(prefix="bench-feedback-") as tmp:
        course = copy_course(Path(tmp) / "course")
        release([ASSIGNMENT], course=course)
        print(load(), "before", flush=True)
        others = OthersCpu()
        service = start_service(course, args.interval)
        try:
            seconds = []
            for i in range(args.handins):
                student = ExchangeStudent(course, f"student{i}", Path(tmp) / f"student{i}")
                seconds.append(submit_to_feedback(course, student))
                page = next(iter(student.fetch_feedback(ASSIGNMENT).values()))[f"{ASSIGNMENT}.html"]
                score = re.search(r"Score: ([\d.]+) / ([\d.]+)", page)
                if not score or score.group(1) != score.group(2):
                    sys.exit(f"the reference solution did not get full points: {score and score.group(0)}")
                print(f"hand-in {i + 1}{' (the workers still warm up)' if i == 0 else ''}: {seconds[-1]:.1f} s "
                      f"from nbgrader submit to fetchable feedback ({score.group(1)}/{score.group(2)}); {load()}",
                      flush=True)
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(timeout=60)
    print(others.report())
    print(f"median {statistics.median(seconds):.1f} s from Submit to fetchable feedback "
          f"(target {TARGET_SECONDS} s; polling every {args.interval:g} s)")
    return 0 if max(seconds) <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
