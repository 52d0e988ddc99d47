"""How long `make report` takes for a big class: a benchmark, not a test.

    python tests/bench_report.py [--students 200] [--chapters 00_setup 01_tensors 05_training_loop] [--runs 3]

A class this size is not graded here (that is `make bench-grading`'s job): each chapter's answer sets
(tests/answers/, the untouched release, the reference) are handed in and graded for real, once, by
autograde_all; then N generated students each take, per chapter, one of those graded hand-ins at
random: its notebook, its gradebook rows (written with the coordinator's own merge) and the judge's
outcome record, with a hand-in time and one to four attempts in the feedback service's history.
Then `python -m grader report` runs over the whole course, `--runs` times; the median and the range
are printed last.
"""
import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from chapter_classes import hand_in_chapter  # noqa: E402
from grader.class_grading.autograde import autograde_all, default_jobs  # noqa: E402
from grader.class_grading.transfer import read_batch_rows, read_tree, write_batch_rows, write_tree  # noqa: E402
from grader.hub.autofeedback import ATTEMPTS, STATE  # noqa: E402
from grader.judge.outcomes import outcome_folder  # noqa: E402
from grader.release import release  # noqa: E402
from submissions import copy_course  # noqa: E402

DUE = datetime(2026, 12, 4, 23, 59)


def generate_class(course: Path, chapters: list, students: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    history = []
    for chapter in chapters:
        graded = [s for s in (p.name for p in (course / "submitted").iterdir()) if (course / "autograded" / s / chapter).is_dir()]
        rows = read_batch_rows(course / "gradebook.db", chapter, graded)
        generated = {}
        for i in range(students):
            student, model = f"student{i:03d}", rng.choice(graded)
            write_tree(course / "submitted" / student / chapter, read_tree(course / "submitted" / model / chapter))
            write_tree(outcome_folder(course, chapter, student), read_tree(outcome_folder(course, chapter, model)))
            generated[student] = dict(rows[model], timestamp=DUE - timedelta(hours=rng.expovariate(1 / 30)))
            handed_in = generated[student]["timestamp"]
            for attempt in range(rng.randint(1, 4)):
                at = handed_in - timedelta(hours=6 * attempt)
                history.append({"at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "student": student, "assignment": chapter,
                                "handed_in": f"{at:%Y-%m-%d %H:%M:%S}.000000 UTC", "result": "graded",
                                "score": float(rng.randint(0, 10)), "max_score": 10.0, "seconds": 9.0})
        write_batch_rows(course / "gradebook.db", chapter, generated)
    (course / STATE).mkdir(exist_ok=True)
    (course / STATE / ATTEMPTS).write_text("".join(json.dumps(r) + "\n" for r in history))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--chapters", nargs="+", default=["00_setup", "01_tensors", "05_training_loop"])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        course = copy_course(Path(tmp) / "course")
        release(args.chapters, course=course)
        for chapter in args.chapters:
            hand_in_chapter(chapter, course)
        start = time.perf_counter()
        assert autograde_all(jobs=default_jobs(), course=course, progress=False) == 0
        print(f"graded the answer sets of {len(args.chapters)} chapters in {time.perf_counter() - start:.0f} s")
        generate_class(course, args.chapters, args.students)
        seconds = []
        for _ in range(args.runs):
            shutil.rmtree(course / "reports", ignore_errors=True)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "grader", "report", "--course", str(course)], check=True,
                           capture_output=True)
            seconds.append(time.perf_counter() - start)
        pages = sorted(p.name for p in (course / "reports").iterdir())
        print(f"pages: {', '.join(pages)}")
        print(f"make report, {args.students} students x {len(args.chapters)} chapters, {args.runs} runs: "
              f"median {statistics.median(seconds):.1f} s (from {min(seconds):.1f} to {max(seconds):.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
