"""grader/reports/similarity.py: planted copies are flagged, independent correct answers are not, the
starter code is excluded, student text is escaped, and a broken hand-in never stops the report.

The answers come from the course: the reference is the solution cell of solutions/NN/NN.ipynb, the
starter is the same cell of the release (notebooks/), the "alternative" is tests/answers/NN.py's."""
import ast
import builtins
import csv
import io
import json
import keyword
import tokenize
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from conftest import load_answers
from grader.course import REPO_ROOT, chapters, tool_env
from grader.reports import similarity as sim


def answer_cells(path) -> dict:
    nb = nbformat.read(path, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}


def course_answers(chapter):
    """{grade_id: (starter, reference, alternative or None)} for one chapter's code exercises."""
    ref = answer_cells(REPO_ROOT / "solutions" / chapter / f"{chapter}.ipynb")
    rel = answer_cells(REPO_ROOT / "notebooks" / chapter / f"{chapter}.ipynb")
    alt = load_answers(chapter).get("alternative", {})
    return {g: (rel[g], ref[g], alt.get(g)) for g in ref}


# --- planted copies: what a student who copies does to hide it -----------------------------------

def rename_locals(src: str) -> str:
    """Every parameter and assigned name gets another name."""
    tree = ast.parse(src)
    names = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names = {n for n in names if not keyword.iskeyword(n) and not hasattr(builtins, n) and n != "self"}
    new = {n: f"my_{n}_{i}" for i, n in enumerate(sorted(names))}
    toks = [t._replace(string=new.get(t.string, t.string)) if t.type == tokenize.NAME else t
            for t in tokenize.generate_tokens(io.StringIO(src).readline)]
    return tokenize.untokenize(toks)


def swap_independent_lines(src: str) -> tuple:
    """Swap every disjoint pair of adjacent one-line assignments where neither reads or writes what
    the other writes (the program means the same); returns (source, pairs swapped)."""
    def reads(s):
        return {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    def writes(s):
        return {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    simple = (ast.Assign, ast.AugAssign, ast.AnnAssign)
    lines, used, swapped = src.splitlines(), set(), 0
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        for s1, s2 in zip(body, body[1:]) if isinstance(body, list) else ():
            if (isinstance(s1, simple) and isinstance(s2, simple) and s1.lineno == s1.end_lineno
                    and s2.lineno == s2.end_lineno == s1.lineno + 1 and not used & {s1.lineno, s2.lineno}
                    and not writes(s1) & (reads(s2) | writes(s2)) and not writes(s2) & reads(s1)):
                lines[s1.lineno - 1], lines[s2.lineno - 1] = lines[s2.lineno - 1], lines[s1.lineno - 1]
                used |= {s1.lineno, s2.lineno}
                swapped += 1
    return "\n".join(lines) + "\n", swapped


def recomment(src: str) -> str:
    """The author's comments dropped, new ones added, a blank line after each statement."""
    out = []
    for line in src.splitlines():
        if line.strip().startswith("#"):
            continue
        code = line.split("  #")[0].rstrip()
        out.append(code + ("  # my own work" if code.strip() else ""))
        if code.strip() and not code.strip().endswith(":"):
            out.append("")
    return "\n".join(out) + "\n"


def planted_copy(src: str) -> tuple:
    copied, swapped = swap_independent_lines(rename_locals(src))
    copied = recomment(copied)
    compile(copied, "<planted>", "exec")  # still a program
    return copied, swapped


def _score(a: str, b: str, starter: str):
    """min of both directions, the common token characters and the token characters of `a`'s own
    fingerprints, as compare_answers computes them (None: one of them has nothing of its own)."""
    prints = sim.fingerprints({"a": a, "b": b}, starter)
    if len(prints) < 2:
        return None
    overlap, (sa, sb), _ = sim.compare_files(prints["a"], prints["b"])
    overlap = min(int(overlap), round(sb * prints["b"].token_coverage))
    return min(sa, sb), overlap, int(prints["a"].token_coverage)


ALL = [(ch, g, *v) for ch in chapters(REPO_ROOT) for g, v in course_answers(ch).items()]


def test_planted_copies_are_flagged(capsys):
    """A copy of the reference and of the alternative (renamed variables, swapped independent lines,
    new comments and blank lines) is flagged against its original in every exercise whose answer has
    enough of its own (starter excluded) to judge; the one-liners too short to judge are counted."""
    checked, too_short, swaps, lowest = 0, [], 0, (2.0, None)
    for chapter, grade_id, starter, ref, alt in ALL:
        for kind, original in (("reference", ref), ("alternative", alt)):
            if original is None:
                continue
            copied, swapped = planted_copy(original)
            score = _score(original, copied, starter)
            if score is None or score[2] < sim.DEFAULT_MIN_OVERLAP + 10:
                too_short.append(grade_id)
                continue
            pairs = sim.compare_answers({"orig": original, "copy": copied}, starter, grade_id=grade_id)
            assert [(p.student_a, p.student_b) for p in pairs] == [("copy", "orig")], \
                f"{chapter} {grade_id} ({kind}): planted copy scored {score}, not flagged"
            checked += 1
            swaps += swapped
            lowest = min(lowest, (score[0], f"{chapter} {grade_id} {kind}"))
    assert checked >= 100 and swaps >= 40, (checked, swaps)
    with capsys.disabled():
        print(f"\nplanted copies: {checked} flagged ({swaps} line pairs swapped), lowest score {lowest[0]:.3f} "
              f"({lowest[1]}); {len(too_short)} answers too short to judge")


INDEPENDENT = [(ch, g, s, r, a) for ch, g, s, r, a in ALL if a is not None]


def test_independent_correct_answers_are_not_flagged(capsys):
    """The reference and the alternative of the same exercise, in every chapter that has both."""
    assert len({ch for ch, *_ in INDEPENDENT}) >= 3
    highest = (0.0, None)
    for chapter, grade_id, starter, ref, alt in INDEPENDENT:
        pairs = sim.compare_answers({"ref": ref, "alt": alt}, starter, grade_id=grade_id)
        assert not pairs, f"{chapter} {grade_id}: independent answers flagged {pairs[0].score_a:.2f}/{pairs[0].score_b:.2f}"
        score = _score(ref, alt, starter)
        if score and score[1] >= sim.DEFAULT_MIN_OVERLAP:
            highest = max(highest, (score[0], f"{chapter} {grade_id}"))
    assert highest[0] < sim.DEFAULT_THRESHOLD
    with capsys.disabled():
        print(f"\nindependent answers: {len(INDEPENDENT)} pairs, none flagged; highest score with "
              f">= {sim.DEFAULT_MIN_OVERLAP} characters in common {highest[0]:.3f} ({highest[1]})")


STARTER = '''def normalise_rows(x):
    """Each row of x divided by its own sum."""
    totals = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)
    weights = torch.ones(x.shape[1], dtype=x.dtype, device=x.device)
    # YOUR CODE HERE
    raise NotImplementedError("not done yet: replace this line with your solution")
'''


def test_starter_code_is_excluded():
    """Two students who kept the starter's lines and added the same line that the starter already
    holds share nothing of their own: not flagged, although they are flagged once the starter is
    not excluded. Answers left as released are not compared at all."""
    extra = "    totals = torch.zeros(x.shape[0], dtype=x.dtype, device=x.device)\n"
    same = STARTER.replace("    # YOUR CODE HERE\n", extra)
    answers = {"ann": same, "ben": same.replace("x", "rows"), "cat": STARTER, "dan": STARTER}
    assert sim.compare_answers(answers, STARTER, min_overlap=0) == []   # not saved by min_overlap
    flagged = sim.compare_answers(answers, "")
    assert {(p.student_a, p.student_b) for p in flagged} >= {("ann", "ben"), ("cat", "dan")}
    # with their own, copied, body they are flagged, and only their own lines are marked
    body = ("    totals = x.sum(dim=1, keepdim=True).clamp_min(1e-12)\n"
            "    out = (x * weights) / totals\n    return out.to(x.dtype)\n")
    copied = {"ann": STARTER.replace("    # YOUR CODE HERE\n", body),
              "ben": STARTER.replace("    # YOUR CODE HERE\n", body.replace("out", "result"))}
    [pair] = sim.compare_answers(copied, STARTER)
    marked = "".join(pair.source_a[s:e] for s, e in pair.slices_a)
    assert "sum(dim=1" in marked and "Each row" not in marked


def test_what_much_of_the_class_wrote_is_common():
    """Twelve students who wrote the usual answer (names of their own) are not flagged; the two who
    share an unusual one are."""
    usual = ("def f(x, w):\n    h = torch.relu(x @ w)\n    s = h.sum(dim=1, keepdim=True)\n"
             "    return h / s.clamp_min(1e-9)\n")
    unusual = ("def f(x, w):\n    out = []\n    for row in x:\n        h = (row @ w).clamp(min=0)\n"
               "        out.append(h / max(float(h.sum()), 1e-9))\n    return torch.stack(out)\n")
    answers = {f"s{i:02d}": rename_locals(usual).replace("my_", f"v{i}_") for i in range(12)}
    answers |= {"pat": unusual, "sam": planted_copy(unusual)[0]}
    compared = {}
    pairs = sim.compare_answers(answers, "", compared=compared)
    assert [(p.student_a, p.student_b) for p in pairs] == [("pat", "sam")]
    assert compared == {("", ""): 2}   # the usual answers had nothing else of their own
    assert len(sim.compare_answers(answers, "", common_min=100)) == 1 + 12 * 11 // 2


# --- a tiny nbgrader course: gradebook + submitted/ ------------------------------------------------

def notebook_with(answers: dict) -> dict:
    cells = [nbformat.v4.new_markdown_cell("# Homework")]
    for grade_id, source in answers.items():
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": False,
                                     "schema_version": 3, "solution": True, "task": False}
        cells.append(cell)
    return nbformat.v4.new_notebook(cells=cells)


def make_course(root: Path, starters: dict, handins: dict, assignment="hw1", notebook="hw") -> Path:
    """A course with one assignment whose notebook's answer cells are `starters` {grade_id: source};
    handins {student: {grade_id: source} or bytes written as the notebook file}."""
    root.mkdir(parents=True, exist_ok=True)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.add_assignment(assignment)
        gb.add_notebook(notebook, assignment)
        for grade_id, source in starters.items():
            gb.add_solution_cell(grade_id, notebook, assignment)
            gb.add_source_cell(grade_id, notebook, assignment, cell_type="code", source=source, locked=False)
    for student, answers in handins.items():
        path = root / "submitted" / student / assignment / f"{notebook}.ipynb"
        path.parent.mkdir(parents=True)
        if isinstance(answers, bytes):
            path.write_bytes(answers)
        else:
            nbformat.write(notebook_with(answers), path)
    return root


def test_class_report_end_to_end(tmp_path, monkeypatch):
    """Three exercises of chapter 02 in a class: the copier is flagged with the student they copied,
    the student who answered independently is not, the untouched stub is not compared, and broken
    hand-ins (not JSON, not UTF-8, a huge cell) are skipped with a note. The gradebook is unchanged."""
    exercises = course_answers("02_autograd")
    chosen = ["logistic_gradients", "accumulate_gradients", "backprop"]
    starters = {g: exercises[g][0] for g in chosen}
    ref = {g: exercises[g][1] for g in chosen}
    handins = {
        "alice": ref,
        "bob": {g: planted_copy(s)[0] for g, s in ref.items()},
        "carol": {g: exercises[g][2] for g in chosen},
        "dave": starters,
        "eve": b'{"cells": [ {"cell_type": "code", "source": "x = 1"',             # cut short
        "frank": json.dumps(nbformat.v4.new_notebook()).encode().replace(b"{", b"{\xff", 1),  # not UTF-8
        "grace": {**ref, "backprop": "x = 1\n" * 10_000},                                # huge cell
        "heidi": b'["not", "a", "notebook"]',
    }
    monkeypatch.setenv("PATH", tool_env()["PATH"])  # nbgrader's Gradebook runs `alembic` by name
    course = make_course(tmp_path / "course", starters, handins)
    db = course / "gradebook.db"
    before = (db.read_bytes(), db.stat().st_mtime_ns)

    report = sim.find_similar(course, "hw1")

    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    flagged = {(p.grade_id, p.student_a, p.student_b) for p in report.pairs}
    # grace's two intact answers are alice's too: that pair is flagged as well
    expected = {(g, "alice", "bob") for g in chosen} | {(g, a, b) for g in chosen[:2] for a, b in
                                                           (("alice", "grace"), ("bob", "grace"))}
    assert flagged == expected
    assert report.compared[("hw", "backprop")] == 3      # alice, bob, carol (dave's is the stub)
    notes = "\n".join(report.notes)
    for student, why in (("eve", "not JSON"), ("frank", "not UTF-8"), ("heidi", "not a notebook"),
                         ("grace", "over")):
        assert student in notes and why in notes, notes
    rows = sim.csv_rows(report.pairs)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=sim.CSV_FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    assert out.getvalue().splitlines()[0] == ",".join(sim.CSV_FIELDS) and len(rows) == len(expected)
    assert all(0.8 <= r["score_a"] <= 1 and 0.8 <= r["score_b"] <= 1 for r in rows)
    page = sim.pairs_html(report.pairs)
    assert page.count('class="similar-pair"') == len(expected) and "<mark>" in page


def test_html_escapes_student_text():
    evil = ('def f(x):\n    """</pre><script>alert(1)</script>"""\n    y = x.sum(dim=0) * 2 + x.mean()\n'
            '    z = torch.stack([y, y * 3, y - 1])\n    return z.clamp(min=0) / (z.max() + 1e-9)\n')
    pairs = sim.compare_answers({"<b>mallory</b>": evil, "trent": evil.replace("y", "w")}, "")
    assert len(pairs) == 1
    page = sim.pairs_html(pairs)
    assert "<script>" not in page and "<b>mallory" not in page
    assert "&lt;/pre&gt;&lt;script&gt;" in page and "&lt;b&gt;mallory" in page
    bare = sim.SimilarPair("nb", "g<1>", "a", "b", 1.0, 1.0, 40, "<i>x</i>", "<i>y</i>")  # no ranges
    assert "<i>" not in sim.pairs_html([bare], style=False) and "&lt;i&gt;x" in sim.pairs_html([bare])
