"""`python -m grader.reports [ASSIGNMENT ...] [--course DIR] [--out DIR]` (make report): the class reports.

Writes <out>/<assignment>.html and .csv for each assignment (default: every one with a submission)
and <out>/index.html. docs/GRADING.md, "What the class got wrong".
"""
import argparse
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from grader.course import REPO_ROOT
from grader.reports import data as class_data
from grader.reports.page import assignment_csv, assignment_page, index_page
from grader.reports.stats import score_summary

OUT = "reports"


def extra_sections(course: Path, out: Path, assignment: str, data) -> list:
    """Sections made by other parts of the platform, when there is something to show."""
    sections = []
    regrade = out / f"{assignment}.regrade.html"
    if regrade.is_file():
        sections.append(("Regrade: what changed", regrade.read_text()))
    try:
        from grader.reports.similarity import report_section
    except ImportError:
        return sections
    sections.append(("Similar answers", report_section(course, assignment)))
    return sections


def write_reports(course: Path = REPO_ROOT, assignments=None, out: Path | None = None) -> list:
    """Write the reports; return the pages written, index last."""
    course = Path(course)
    out = Path(out) if out else course / OUT
    out.mkdir(parents=True, exist_ok=True)
    known = class_data.gradebook_assignments(course)
    wanted = list(assignments) if assignments else known
    unknown = [a for a in wanted if a not in known]
    if unknown:
        raise LookupError(f"nothing graded of {', '.join(unknown)} (graded: {', '.join(known) or 'nothing yet'})")
    written = []
    for assignment in wanted:
        data = class_data.load(course, assignment)
        page = assignment_page(data, notebooks_url=_relative(course / "autograded", out),
                               extra_sections=extra_sections(course, out, assignment, data))
        _write(out / f"{assignment}.html", page)
        _write(out / f"{assignment}.csv", assignment_csv(data))
        written.append(out / f"{assignment}.html")
    # the index lists every report in the folder, those of earlier runs for other assignments too
    entries = []
    for assignment in known:
        if (out / f"{assignment}.html").is_file():
            summary = score_summary(class_data.load(course, assignment))
            entries.append((assignment, summary["students"], summary.get("mean"), summary["max_score"]))
    _write(out / "index.html", index_page(entries, datetime.now(timezone.utc)))
    return written + [out / "index.html"]


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)   # a page being read is never half written (the hub serves this folder)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.reports", description=__doc__)
    parser.add_argument("assignments", nargs="*", help="default: every assignment with a submission")
    parser.add_argument("--course", type=Path, default=REPO_ROOT)
    parser.add_argument("--out", type=Path, default=None, help=f"default: <course>/{OUT}")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        pages = write_reports(args.course, args.assignments, args.out)
    except (FileNotFoundError, LookupError) as err:
        print(f"make report: {err}", file=sys.stderr)
        return 2
    for page in pages:
        print(f"wrote {page}")
    print(f"{time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
