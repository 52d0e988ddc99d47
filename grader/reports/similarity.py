"""Pairs of students whose answer cells are unusually alike, per exercise, for the instructor to judge.

It never changes a grade: it reads the hand-ins and the gradebook, and writes nothing.

What is compared. For one assignment of an nbgrader course directory, the answer cells are the code
cells whose nbgrader metadata has ``solution: true``, keyed by (notebook, grade_id); each student's
cell is read from ``submitted/<student>/<assignment>/<notebook>.ipynb``. Markdown answer cells are
skipped: the tokenizer below is made for code, and short written answers in a course's words are
alike by nature. The starter code of each answer cell is its released source, read from the
gradebook's ``source_cell`` table (nbgrader's SaveCells stores it there after ClearSolutions, so it
works for any nbgrader assignment). An answer left as released, or with nothing left once the
starter's fingerprints are removed, is never compared.

How. copydetect (https://github.com/blingenf/copydetect) does the work: its tokenizer (pygments)
drops comments and whitespace and writes every variable, attribute and function name as one letter
(keywords, builtins such as ``len`` and numbers stay as written),
so renamed variables, changed comments and blank lines change nothing; winnowing of the k-grams of
that token text gives each answer's fingerprints; the starter's fingerprints are removed as
copydetect's boilerplate; ``compare_files`` gives, in both directions, the share of one answer's
fingerprinted text that is found in the other, and the copied character ranges in the raw sources.

Thresholds, for cells of 3 to 15 lines. In the token text a typical line is 10 to 30 characters
(``return x.sum(dim=1)`` becomes ``returnV.V(V=1)``). copydetect's default noise threshold (25
characters) is longer than most lines, so a copy whose lines were put in another order would lose
most of its matches; 8 characters keeps several k-grams inside every line. The guarantee threshold
equals the noise threshold (winnowing window 1): every k-gram is a fingerprint, which costs nothing
for cells this short and means any common run of 8 or more token characters is seen. Short runs
such as ``V=V.V(V)`` are common to any two answers, so a pair is flagged only when BOTH directions
reach ``DEFAULT_THRESHOLD`` and the common token text is at least ``DEFAULT_MIN_OVERLAP`` characters
(a one-line answer that every correct student writes alike is no evidence, and is never flagged).
For the same reason a fingerprint found in the answers of more than max(10, 10 % of the students
compared) is removed like the starter's (MOSS's ``-m`` limit): a copy shared by a larger group is
then missed, and a class where most students write one idiom does not flood the report.
Measured on this course's answers (tests/test_similarity.py): independent correct answers to the
same exercise (reference and "alternative") reach at most 0.76 with 30 or more characters in
common; planted copies with renamed variables, swapped lines and new comments score 0.85 or more.

Untrusted input: a notebook that is not UTF-8, not JSON or not a notebook, and a cell over
``max_chars`` characters, are skipped with a note; the rest of the class is still compared. The HTML
escapes everything a student wrote.
"""
from __future__ import annotations

import collections
import html
import io
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect.utils import get_token_coverage, highlight_overlap

NOISE_THRESHOLD = 8         # shortest common run of token text (characters) that counts
GUARANTEE_THRESHOLD = 8     # every common run this long is found (window = guarantee - noise + 1)
DEFAULT_THRESHOLD = 0.8     # both directions: share of each answer found in the other
DEFAULT_MIN_OVERLAP = 30    # common token characters below which a pair is never flagged
DEFAULT_MAX_CHARS = 20_000  # a larger answer cell is skipped with a note
MAX_NOTEBOOK_BYTES = 50_000_000  # a larger hand-in (outputs included) is not read
COMMON_SHARE, COMMON_MIN = 0.1, 10  # a fingerprint in more answers than both is common, not evidence
CSV_FIELDS = ("notebook", "grade_id", "student_a", "student_b", "score_a", "score_b", "overlap")


@dataclass(frozen=True)
class SimilarPair:
    """One flagged pair for one exercise. score_a: the share of A's answer (its fingerprinted token
    text, starter removed) found in B's; score_b the other way. overlap: common token characters
    (the lesser count of the two sides).
    slices_a/slices_b: the (start, end) character ranges of each raw source that match the other."""
    notebook: str
    grade_id: str
    student_a: str
    student_b: str
    score_a: float
    score_b: float
    overlap: int
    source_a: str
    source_b: str
    slices_a: tuple = ()
    slices_b: tuple = ()


@dataclass
class SimilarityReport:
    """pairs: flagged pairs, exercise by exercise, most alike first in each. notes: what was skipped and why, for the instructor.
    compared: {(notebook, grade_id): number of students whose answer was compared}."""
    assignment: str
    pairs: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    compared: dict = field(default_factory=dict)


def _fingerprint(name, code, language, *, win_size, noise):
    """copydetect's fingerprint of `code` (a string, never a file)."""
    return CodeFingerprint(name, noise, win_size, language=language, fp=io.StringIO(code))


def _drop(fp, hashes, noise):
    """Remove `hashes` from a CodeFingerprint, as copydetect's boilerplate; False if none is left."""
    if fp.hashes & hashes:
        fp.hash_idx = {h: i for h, i in fp.hash_idx.items() if h not in hashes}
        fp.hashes = set(fp.hash_idx)
        fp.token_coverage = get_token_coverage(fp.hash_idx, noise, len(fp.filtered_code))
    return bool(fp.hashes)


def fingerprints(answers, starter="", *, language="python", noise=NOISE_THRESHOLD,
                 guarantee=GUARANTEE_THRESHOLD, common_share=COMMON_SHARE, common_min=COMMON_MIN,
                 notes=None, where=""):
    """{student: copydetect CodeFingerprint} of the answers to compare: not left as released, and with
    fingerprints of their own once the starter's and the common ones are removed."""
    notes = [] if notes is None else notes
    if guarantee < noise:
        raise ValueError("the guarantee threshold must be at least the noise threshold")
    win = guarantee - noise + 1
    # The starter's fingerprints are every k-gram of it (window 1), as copydetect's CopyDetector makes
    # its boilerplate; they are removed after fingerprinting rather than passed to CodeFingerprint,
    # whose removal (np.intersect1d with assume_unique=True on a list that has repeats) also drops
    # one place of every fingerprint an answer repeats, and with it part of the highlighting.
    boiler = set()
    if starter.strip():
        boiler = _fingerprint("starter", starter, language, win_size=1, noise=noise).hashes
    prints = {}
    for student in sorted(answers):
        code = answers[student]
        if code.strip() == starter.strip():
            continue  # left as released
        try:
            fp = _fingerprint(student, code, language, win_size=win, noise=noise)
        except Exception as exc:  # pygments or copydetect on hostile text: leave this one out
            notes.append(f"{student}: {where} not compared ({type(exc).__name__}: {exc})")
            continue
        if _drop(fp, boiler, noise):
            prints[student] = fp
    counts = collections.Counter(h for fp in prints.values() for h in fp.hashes)
    limit = max(common_min, math.ceil(common_share * len(prints)))
    common = {h for h, n in counts.items() if n > limit}
    if common:
        prints = {student: fp for student, fp in prints.items() if _drop(fp, common, noise)}
    return prints


def compare_answers(answers, starter="", *, notebook="", grade_id="", language="python",
                    threshold=DEFAULT_THRESHOLD, min_overlap=DEFAULT_MIN_OVERLAP,
                    noise=NOISE_THRESHOLD, guarantee=GUARANTEE_THRESHOLD, common_share=COMMON_SHARE,
                    common_min=COMMON_MIN, notes=None, compared=None):
    """Flagged pairs among {student: source} answers to one exercise whose released source is `starter`.

    Every pair of students is compared; both directions must reach `threshold` and the common token
    text must reach `min_overlap` characters. A fingerprint found in the answers of more than
    max(common_min, common_share * students) students is removed like the starter's: what much of
    the class wrote alike is the usual answer, not a copy.

    Returns SimilarPair records, most alike first. Appends to `notes` (a list) why an answer was left
    out; sets compared[(notebook, grade_id)] (a dict) to the number of answers compared (not left as
    released, and something of their own once the starter and the common parts are out).
    """
    notes = [] if notes is None else notes
    prints = fingerprints(answers, starter, language=language, noise=noise, guarantee=guarantee,
                          common_share=common_share, common_min=common_min, notes=notes,
                          where=f"{notebook} {grade_id}")
    if compared is not None:
        compared[(notebook, grade_id)] = len(prints)
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        fa, fb = prints[a], prints[b]
        shared = fa.hashes & fb.hashes
        if not shared:
            continue
        # An exact upper bound on both scores (each common fingerprint covers at most `noise`
        # characters), so that most of the n^2/2 pairs skip copydetect's slower comparison.
        cover_a = noise * sum(len(fa.hash_idx[h]) for h in shared)
        cover_b = noise * sum(len(fb.hash_idx[h]) for h in shared)
        if cover_a < threshold * fa.token_coverage or cover_b < threshold * fb.token_coverage:
            continue
        overlap, (sim_a, sim_b), (slices_a, slices_b) = compare_files(fa, fb)
        # copydetect counts the common token text in A's; B's is sim_b * B's coverage: the lesser
        # of the two, so that the order of the names changes nothing
        overlap = min(int(overlap), round(sim_b * fb.token_coverage))
        if sim_a >= threshold and sim_b >= threshold and overlap >= min_overlap:
            pairs.append(SimilarPair(notebook, grade_id, a, b, float(sim_a), float(sim_b), int(overlap),
                                     fa.raw_code, fb.raw_code, _ranges(slices_a), _ranges(slices_b)))
    pairs.sort(key=lambda p: (-min(p.score_a, p.score_b), p.student_a, p.student_b))
    return pairs


def _ranges(slices):
    if len(slices) == 0 or len(slices[0]) == 0:
        return ()
    return tuple((int(s), int(e)) for s, e in zip(slices[0], slices[1]))


def _cell_source(cell):
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(s, str) for s in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise ValueError("its source is not text")
    source.encode("utf-8")  # lone surrogates from JSON escapes would break the report page later
    return source


def read_answers(path, wanted, max_chars=DEFAULT_MAX_CHARS):
    """{grade_id: source} of the code answer cells of one hand-in whose grade_id is in `wanted`.

    Raises ValueError (with a reason) for a notebook that cannot be read; a cell whose source is not
    text or over `max_chars` characters is left out and named in the second returned value."""
    try:
        size = Path(path).stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            raise ValueError(f"unreadable notebook: {size} bytes, over {MAX_NOTEBOOK_BYTES}")
        nb = json.loads(Path(path).read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("unreadable notebook: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"unreadable notebook: not JSON ({exc.msg}, line {exc.lineno})") from None
    except (OSError, RecursionError) as exc:
        raise ValueError(f"unreadable notebook: {type(exc).__name__}") from None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a notebook (no list of cells)")
    answers, skipped = {}, []
    for cell in cells:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
        if not isinstance(nbg, dict) or not nbg.get("solution") or cell.get("cell_type") != "code":
            continue
        grade_id = nbg.get("grade_id")
        if not isinstance(grade_id, str) or grade_id not in wanted:
            continue
        try:
            source = _cell_source(cell)
        except (ValueError, UnicodeEncodeError) as exc:
            skipped.append(f"{grade_id}: {'not UTF-8 text' if isinstance(exc, UnicodeEncodeError) else exc}")
            continue
        if len(source) > max_chars:
            skipped.append(f"{grade_id}: {len(source)} characters, over {max_chars}")
            continue
        # A duplicated answer cell: both copies are the student's answer.
        answers[grade_id] = answers[grade_id] + "\n" + source if grade_id in answers else source
    return answers, skipped


def starters(course_dir, assignment, db_url=None):
    """{notebook: {grade_id: (cell_type, released source)}} of the assignment's answer cells, read
    from the gradebook without writing to it (SQLite is opened read-only)."""
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session
    from nbgrader.api import Assignment

    if db_url is None:
        db = Path(course_dir).resolve() / "gradebook.db"
        if not db.exists():
            raise FileNotFoundError(f"no gradebook at {db}")
        db_url = f"sqlite:///file:{db}?mode=ro&uri=true"
    engine = create_engine(db_url)
    try:
        with Session(engine) as session:
            found = session.query(Assignment).filter_by(name=assignment).all()
            if not found:
                raise KeyError(f"the gradebook has no assignment {assignment!r}")
            result = {}
            for nb in found[0].notebooks:
                names = {c.name for c in nb.solution_cells}
                src = {c.name: (c.cell_type, c.source or "") for c in nb.source_cells}
                result[nb.name] = {n: src.get(n, ("code", "")) for n in sorted(names)}
            return result
    finally:
        engine.dispose()


def find_similar(course_dir, assignment, *, db_url=None, threshold=DEFAULT_THRESHOLD,
                 min_overlap=DEFAULT_MIN_OVERLAP, noise=NOISE_THRESHOLD, guarantee=GUARANTEE_THRESHOLD,
                 common_share=COMMON_SHARE, common_min=COMMON_MIN, max_chars=DEFAULT_MAX_CHARS,
                 language="python"):
    """Compare every pair of students' answer cells of `assignment`, exercise by exercise.

    course_dir: an nbgrader course directory (gradebook.db, submitted/<student>/<assignment>/).
    Returns a SimilarityReport; reads only."""
    course_dir = Path(course_dir)
    report = SimilarityReport(assignment)
    exercises = starters(course_dir, assignment, db_url)
    submitted = course_dir / "submitted"
    students = sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir()) \
        if submitted.is_dir() else []
    for notebook, cells in sorted(exercises.items()):
        code_cells = {g: s for g, (kind, s) in cells.items() if kind == "code"}
        for g, (kind, _) in cells.items():
            if kind != "code":
                report.notes.append(f"{notebook} {g}: a markdown answer, not compared")
        by_exercise = {g: {} for g in code_cells}
        for student in students:
            path = course_dir / "submitted" / student / assignment / f"{notebook}.ipynb"
            if not path.is_file():
                continue
            try:
                answers, skipped = read_answers(path, code_cells, max_chars)
            except ValueError as exc:
                report.notes.append(f"{student}: {notebook}.ipynb skipped: {exc}")
                continue
            report.notes.extend(f"{student}: {notebook} {s}, skipped" for s in skipped)
            for g, source in answers.items():
                by_exercise[g][student] = source
        for g, answers in by_exercise.items():
            report.pairs += compare_answers(answers, code_cells[g], notebook=notebook, grade_id=g,
                                            language=language, threshold=threshold,
                                            min_overlap=min_overlap, noise=noise, guarantee=guarantee,
                                            common_share=common_share, common_min=common_min,
                                            notes=report.notes, compared=report.compared)
    return report


def csv_rows(pairs):
    """One dict per flagged pair, keys CSV_FIELDS (for csv.DictWriter)."""
    return [{"notebook": p.notebook, "grade_id": p.grade_id, "student_a": p.student_a,
             "student_b": p.student_b, "score_a": round(p.score_a, 3), "score_b": round(p.score_b, 3),
             "overlap": p.overlap} for p in pairs]


STYLE = """<style>
.similar-pair { margin: 1em 0; border-top: 1px solid #ccc; }
.similar-pair .sides { display: flex; gap: 1em; }
.similar-pair .side { flex: 1; min-width: 0; }
.similar-pair pre { overflow-x: auto; background: #f7f7f7; padding: .5em; }
.similar-pair mark { background: #ffd6d6; }
</style>"""


def _highlighted(source, ranges):
    """The source as escaped HTML, the copied ranges inside <mark>."""
    if not ranges:
        return html.escape(source)
    slices = np.array(ranges, dtype=np.int64).T
    text, _ = highlight_overlap(source, slices, "<mark>", "</mark>", escape_html=True)
    return text


def pairs_html(pairs, *, style=True):
    """An HTML fragment: each flagged pair side by side, the matching parts marked. For the
    instructor's judgment only; everything the students wrote is escaped."""
    parts = [STYLE] if style else []
    if not pairs:
        parts.append("<p>No pair of answers is unusually alike.</p>")
    for p in pairs:
        e = html.escape
        parts.append(
            f'<section class="similar-pair"><h4>{e(p.notebook)} / {e(p.grade_id)}: '
            f'{e(p.student_a)} and {e(p.student_b)}</h4>'
            f'<p>{p.score_a:.0%} of {e(p.student_a)}\'s answer is found in {e(p.student_b)}\'s, '
            f'{p.score_b:.0%} the other way ({p.overlap} token characters in common, starter code '
            f'excluded). Similar is not copied: read both.</p><div class="sides">'
            f'<div class="side"><b>{e(p.student_a)}</b><pre>{_highlighted(p.source_a, p.slices_a)}</pre></div>'
            f'<div class="side"><b>{e(p.student_b)}</b><pre>{_highlighted(p.source_b, p.slices_b)}</pre></div>'
            f'</div></section>')
    return "\n".join(parts)
