"""`python -m grader <verb>`: what the Makefile's instructor and student verbs call."""
import argparse
from pathlib import Path

from grader.course import REPO_ROOT


def _release(args):
    from grader.release import release
    for name in release(args.chapters):
        print(f"released {name}")
    return 0


def _outputs(args):
    from grader.outputs import refresh
    refresh(args.chapters)
    return 0


def _autograde(args):
    from grader.class_grading.autograde import autograde_all
    from grader.class_grading.cluster import SchedulerUnreachable
    try:
        return autograde_all(jobs=args.jobs, scheduler=args.scheduler or None)
    except SchedulerUnreachable as err:
        print(f"make autograde: {err}")
        return 2


def _feedback(args):
    from grader.feedback import generate_all
    return generate_all()


def _report(args):
    from grader.reports.__main__ import main as report_main
    return report_main([*args.assignments, "--course", str(args.course)])


def _regrade(args):
    from grader.class_grading.regrade import changes_html, changes_text, regrade
    from grader.reports.__main__ import OUT, write_reports
    status, changes = regrade(args.course, args.assignment, apply=args.apply, jobs=args.jobs)
    print(changes_text(changes))
    out = args.course / OUT
    out.mkdir(exist_ok=True)
    (out / f"{args.assignment}.regrade.html").write_text(changes_html(changes, applied=args.apply and status == 0))
    if status:
        print("some submissions could not be graded again: nothing was applied" if args.apply else
              "some submissions could not be graded again (their lines above compare with nothing)")
    elif not args.apply and changes:
        print(f"nothing changed yet: `make regrade ASSIGNMENT={args.assignment} APPLY=1` applies these")
    for page in write_reports(args.course, [args.assignment]):
        print(f"wrote {page}")
    return status


def _check(args):
    from grader.selfcheck import main as check_main
    return check_main(args.notebook)


def _bundle(args):
    from grader.bundle import write_bundle
    write_bundle(args.dest)
    return 0


def _workspace(args):
    from grader.workspace import main as workspace_main
    return workspace_main(args.folder)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)

    p = verbs.add_parser("release", help="solutions/ -> notebooks/ (nbgrader generate_assignment)")
    p.add_argument("chapters", nargs="*")
    p.set_defaults(func=_release)

    p = verbs.add_parser("outputs", help="re-execute solution notebooks in place")
    p.add_argument("chapters", nargs="*")
    p.set_defaults(func=_outputs)

    p = verbs.add_parser("autograde", help="grade everything in submitted/")
    p.add_argument("--jobs", type=int, default=None, help="local workers (default: one per core)")
    p.add_argument("--scheduler", default=None, help="a running Dask scheduler, tcp://host:8786 "
                   "(default: a cluster of --jobs workers on this machine, started and stopped here)")
    p.set_defaults(func=_autograde)

    p = verbs.add_parser("feedback", help="feedback HTML for graded submissions")
    p.set_defaults(func=_feedback)

    p = verbs.add_parser("report", help="class reports: reports/<assignment>.html and .csv, reports/index.html")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--course", type=Path, default=REPO_ROOT)
    p.set_defaults(func=_report)

    p = verbs.add_parser("regrade", help="grade an assignment again into a scratch gradebook; show the changes")
    p.add_argument("assignment")
    p.add_argument("--apply", action="store_true", help="then write them into the course, with new feedback")
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--course", type=Path, default=REPO_ROOT)
    p.set_defaults(func=_regrade)

    p = verbs.add_parser("check", help="run a notebook's visible tests and print a table")
    p.add_argument("notebook")
    p.set_defaults(func=_check)

    p = verbs.add_parser("bundle", help="write the student bundle")
    p.add_argument("dest")
    p.set_defaults(func=_bundle)

    p = verbs.add_parser("workspace", help="copy new chapters and newer releases into the student's workspace")
    p.add_argument("folder", nargs="?", default=None, help="default: workspace/ in the course")
    p.set_defaults(func=_workspace)

    args = parser.parse_args(argv)
    return args.func(args)
