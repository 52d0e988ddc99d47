"""`python -m grader.reports [ASSIGNMENT ...] [--course DIR] [--out DIR]` (make report): the class reports.

Writes <out>/<assignment>.html and .csv for each assignment (default: every one with a submission)
and <out>/index.html. docs/GRADING.md, "What the class got wrong".
"""
import argparse
import os
import sys
import time
from datetime import datetime, timezone
from html import escape
from pathlib import Path

from grader.course import COURSE_ID, REPO_ROOT
from grader.inbound import Entry, refused_entries
from grader.reports import OUT, data as class_data
from grader.reports.page import assignment_csv, assignment_page, index_page, refused_section
from grader.reports.similarity import find_similar, pairs_html
from grader.reports.stats import score_summary

DEFAULT_EXCHANGE = "/usr/local/share/nbgrader/exchange"   # nbgrader's Exchange.root when nothing sets it


def regrade_section(out: Path, assignment: str) -> list:
    """The last `make regrade`'s changes (grader/class_grading/regrade.py), when there was one."""
    regrade = out / f"{assignment}.regrade.html"
    return [("Regrade: what changed", regrade.read_text())] if regrade.is_file() else []


def similarity(course: Path, assignment: str) -> tuple:
    """(section, CSV rows): pairs of unusually alike answers, for the instructor's judgment only."""
    found = find_similar(course, assignment)
    compared = sum(found.compared.values())
    intro = (f"<p class='note'>{len(found.pairs)} pairs flagged over {len(found.compared)} exercises "
             f"({compared} answers compared, starter code excluded). A flag changes no grade.</p>")
    rows = [("similar answers", f"{p.grade_id.removesuffix('_tests')} / {p.student_a} / {p.student_b}", measure,
             value) for p in found.pairs for measure, value in (("share of a in b", round(p.score_a, 3)),
                                                                 ("share of b in a", round(p.score_b, 3)))]
    skipped = "".join(f"<li>{escape(note)}</li>" for note in found.notes)   # notes name student folders
    if skipped:
        intro += f"<details><summary>{len(found.notes)} answers not compared, and why</summary><ul>{skipped}</ul></details>"
    return ("Similar answers", intro + pairs_html(found.pairs)), rows


def refused_hand_ins(course: Path) -> list:
    """The exchange gate's records of refused entries (grader/inbound.py), [] where the course's exchange
    has none or its configuration cannot be read. The exchange is where the course's nbgrader_config.py
    puts it, read here as nbgrader reads it (no nbgrader process: 2 s saved on every report)."""
    from traitlets.config.loader import PyFileConfigLoader
    try:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        root = config.Exchange.get("root", DEFAULT_EXCHANGE)
        course_id = config.CourseDirectory.get("course_id", COURSE_ID)
    except Exception:   # noqa: BLE001 (a broken configuration: the reports still come, without this list)
        return []
    return refused_entries(Path(root) / course_id / "inbound")


def write_reports(course: Path = REPO_ROOT, assignments=None, out: Path | None = None,
                  notebooks_url: str | None = None) -> list:
    """Write the reports; return the pages written, index last. `notebooks_url`: where the links to
    graded notebooks point (default: the course's autograded/, relative to the reports)."""
    course = Path(course)
    refused = refused_hand_ins(course)
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
        similar, similar_rows = similarity(course, assignment)
        page = assignment_page(data, notebooks_url=notebooks_url or _relative(course / "autograded", out),
                               extra_sections=[similar, *regrade_section(out, assignment),
                                               ("Refused hand-ins", refused_section(
                                                   [r for r in refused if _assignment_of(r) == assignment]))])
        _write(out / f"{assignment}.html", page)
        _write(out / f"{assignment}.csv", assignment_csv(data, similar_rows))
        written.append(out / f"{assignment}.html")
    # the index lists every report in the folder, those of earlier runs for other assignments too
    entries = []
    for assignment in known:
        if (out / f"{assignment}.html").is_file():
            summary = score_summary(class_data.load(course, assignment))
            entries.append((assignment, summary["students"], summary.get("mean"), summary["max_score"]))
    _write(out / "index.html", index_page(entries, datetime.now(timezone.utc), refused))
    return written + [out / "index.html"]


def _assignment_of(record: dict) -> str | None:
    entry = Entry.parse(record.get("name", ""))
    return entry.assignment if entry else None


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
