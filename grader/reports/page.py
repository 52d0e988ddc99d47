"""One assignment's report as an HTML page and a CSV, and the course's index page.

Every piece of text that came from a student (ids, the judge's reasons, which quote student values)
is escaped: the page is opened by instructors, in their browser, with their hub session.
"""
import csv
import io
from datetime import datetime
from html import escape

from grader.reports import figures
from grader.reports.stats import attempt_stats, exercise_stats, score_summary

LINKS_PER_MISTAKE = 3   # autograded notebooks linked under each common mistake
MISTAKES_SHOWN = 5      # per exercise

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222 }
table { border-collapse: collapse; margin: .5rem 0 1.5rem } td, th { border: 1px solid #ccc; padding: .2rem .5rem }
th { background: #f3f3f3 } td.n { text-align: right } .figure { display: block; margin: .5rem 0 }
.note { color: #555 } .changed { background: #fff3e0 }
"""


def _page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>{body}</body></html>")


def _num(x, digits=2) -> str:
    return "–" if x is None else f"{x:.{digits}f}".rstrip("0").rstrip(".") if isinstance(x, float) else str(x)


def assignment_page(data, notebooks_url: str = "../autograded", extra_sections: list = ()) -> str:
    """The report of one assignment. `notebooks_url`: where links to autograded notebooks point
    (relative to the page: the course's autograded/ folder); `extra_sections`: (title, html) of
    sections made elsewhere (similarity, a regrade's changes)."""
    summary, stats = score_summary(data), exercise_stats(data)
    parts = [f"<h1>{escape(data.assignment)}</h1>"]
    if not summary["students"]:
        parts.append("<p>Nothing graded yet.</p>")
        return _page(data.assignment, "".join(parts))
    due = f", due {data.duedate:%Y-%m-%d %H:%M} UTC" if data.duedate else ""
    parts.append(f"<p>{summary['students']} students graded{due}. Score out of {summary['max_score']:g}: "
                 f"mean {_num(summary['mean'])}, median {_num(summary['median'])}, from {_num(summary['min'])} "
                 f"to {_num(summary['max'])}; {summary['full_marks']} with full marks.</p>")
    parts.append(figures.score_histogram([s.total for s in data.submissions.values()], data.max_score))
    parts.append("<h2>Exercises</h2>" + figures.exercise_bars(stats) + _exercise_table(stats))
    parts.append("<h2>The most common mistakes</h2><p class='note'>The hidden checks that students failed, "
                 "most failed first, with the judge's reason for one of them and links to some of their "
                 "graded notebooks.</p>")
    parts += [_mistakes(s, data.assignment, notebooks_url) for s in stats if s.mistakes]
    parts.append(_attempts_section(data))
    if data.extensions:
        parts.append("<h2>Extensions</h2><table><tr><th>student</th><th>own due date (UTC)</th></tr>" + "".join(
            f"<tr><td>{escape(s)}</td><td>{due:%Y-%m-%d %H:%M}</td></tr>" for s, due in sorted(data.extensions.items()))
            + "</table>")
    for title, section in extra_sections:
        parts.append(f"<h2>{escape(title)}</h2>{section}")
    return _page(f"{data.assignment}: class report", "".join(parts))


def _exercise_table(stats) -> str:
    rows = "".join(
        f"<tr><td>{escape(s.exercise.label)}</td><td class=n>{s.exercise.points:g}</td><td class=n>{s.full}</td>"
        f"<td class=n>{s.partial}</td><td class=n>{s.zero}</td><td class=n>{_num(s.mean)}</td>"
        f"<td class=n>{_num(s.discrimination)}</td><td class=n>{s.flagged}</td></tr>" for s in stats)
    return ("<table><tr><th>exercise</th><th>points</th><th>full</th><th>partial</th><th>zero</th><th>mean</th>"
            "<th title='correlation of the exercise&#39;s points with the rest of the assignment'>discrimination</th>"
            f"<th>flagged</th></tr>{rows}</table>")


def _mistakes(stat, assignment: str, notebooks_url: str) -> str:
    rows = []
    for name, count, why in stat.mistakes[:MISTAKES_SHOWN]:
        links = ", ".join(
            f"<a href='{escape(notebooks_url)}/{escape(s)}/{escape(assignment)}/{escape(stat.exercise.notebook)}"
            f".ipynb'>{escape(s)}</a>" for s in stat.failing[name][:LINKS_PER_MISTAKE])
        rows.append(f"<tr><td>{escape(name)}</td><td class=n>{count} of {stat.students}</td>"
                    f"<td>{escape(_reason(name, why))}</td><td>{links}</td></tr>")
    return (f"<h3>{escape(stat.exercise.label)}</h3><table><tr><th>hidden check</th><th>students who failed it</th>"
            f"<th>for example</th><th>graded notebooks</th></tr>{''.join(rows)}</table>")


def _reason(check: str, why: str) -> str:
    """The judge's reason without its label ("hidden check 3 of 7 (<check>): "), which the row already names."""
    return why.split(f" ({check}): ", 1)[-1]


def _attempts_section(data) -> str:
    from nbgrader.utils import parse_utc
    attempts = attempt_stats(data)
    times = []
    for record in data.attempts:
        try:
            times.append(parse_utc(record["handed_in"]))
        except (KeyError, TypeError, ValueError):
            continue
    source = "the feedback service's history"
    if not times:   # no service: the gradebook has each student's last hand-in
        times = [s.timestamp for s in data.submissions.values() if s.timestamp is not None]
        source = "the gradebook (the last hand-in of each student)"
    parts = ["<h2>Hand-ins</h2>"]
    if times:
        parts.append(f"<p class='note'>From {source}.</p>" + figures.handins_over_time(times, data.duedate))
    if attempts:
        pairs = [(a.first, a.best) for a in attempts if a.first is not None]
        counts = [a.attempts for a in attempts]
        parts.append(f"<p>{len(attempts)} students handed in {sum(counts)} times "
                     f"(at most {max(counts)} times each).</p>")
        if pairs:
            parts.append(figures.first_and_best(pairs, data.max_score))
        parts.append("<table><tr><th>student</th><th>attempts</th><th>first score</th><th>best score</th>"
                     "<th>last graded (UTC)</th></tr>" + "".join(
                         f"<tr><td>{escape(a.student)}</td><td class=n>{a.attempts}</td><td class=n>{_num(a.first)}"
                         f"</td><td class=n>{_num(a.best)}</td><td>{escape(a.last_at)}</td></tr>" for a in attempts)
                     + "</table>")
    else:
        parts.append("<p class='note'>No feedback-on-submit history for this assignment.</p>")
    return "".join(parts)


def assignment_csv(data, extra_rows=()) -> str:
    """Every number of the report, one per row: section, item, measure, value (`extra_rows`: the
    same four, from sections made elsewhere)."""
    out = io.StringIO()
    rows = csv.writer(out)
    rows.writerow(["section", "item", "measure", "value"])
    for measure, value in score_summary(data).items():
        rows.writerow(["class", data.assignment, measure, value])
    for stat in exercise_stats(data):
        for measure in ("points", "students", "full", "partial", "zero", "mean", "discrimination", "flagged"):
            value = stat.exercise.points if measure == "points" else getattr(stat, measure)
            rows.writerow(["exercise", stat.exercise.label, measure, "" if value is None else value])
        for name, count, _ in stat.mistakes:
            rows.writerow(["hidden check failed", f"{stat.exercise.label} / {name}", "students", count])
    for student, sub in sorted(data.submissions.items()):
        rows.writerow(["student", student, "score", sub.total])
        rows.writerow(["student", student, "late penalty", sub.late_penalty])
    for a in attempt_stats(data):
        rows.writerow(["attempts", a.student, "attempts", a.attempts])
        rows.writerow(["attempts", a.student, "first score", "" if a.first is None else a.first])
        rows.writerow(["attempts", a.student, "best score", "" if a.best is None else a.best])
    for student, due in sorted(data.extensions.items()):
        rows.writerow(["extension", student, "due", due.isoformat()])
    rows.writerows(extra_rows)
    return out.getvalue()


def refused_section(refused: list) -> str:
    """What the exchange's gate refused (grader/inbound.py, quarantine/refused.jsonl): each entry's name as
    the student wrote it, its folder's owner (who wrote it, whatever name it claims), why, what was done."""
    if not refused:
        return "<p class='note'>Nothing refused.</p>"
    return ("<p class='note'>Entries in the exchange's inbound/ that no grade, feedback page or classmate "
            "saw: a name that is not the owner's, no student of the course, a link, a date in the future, "
            "a change after the date, too large. The owner is the Unix user who wrote it.</p>"
            "<table><tr><th>when (UTC)</th><th>owner</th><th>entry</th><th>why</th><th>done</th></tr>" + "".join(
                f"<tr><td>{escape(r.get('at', ''))}</td><td>{escape(r.get('owner', ''))}</td>"
                f"<td>{escape(ascii(r.get('name', ''))[1:-1])}</td><td>{escape(r.get('why', ''))}</td>"
                f"<td>{escape(r.get('done', ''))}</td></tr>" for r in refused) + "</table>")


def index_page(entries: list, made: datetime, refused: list = ()) -> str:
    """entries: [(assignment, students, mean, max score)]; refused: the gate's records, every one."""
    rows = "".join(f"<tr><td><a href='{escape(a)}.html'>{escape(a)}</a></td><td class=n>{n}</td>"
                   f"<td class=n>{_num(mean)}</td><td class=n>{_num(top)}</td>"
                   f"<td><a href='{escape(a)}.csv'>CSV</a></td></tr>" for a, n, mean, top in entries)
    return _page("Class reports", f"<h1>Class reports</h1><p class='note'>Made {made:%Y-%m-%d %H:%M} UTC.</p>"
                 "<table><tr><th>assignment</th><th>students graded</th><th>mean score</th><th>out of</th>"
                 f"<th>data</th></tr>{rows}</table><h2>Refused hand-ins</h2>{refused_section(list(refused))}")
