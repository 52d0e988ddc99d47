"""Does each answer set in tests/answers get the same grade whatever the student's seed?

tests/test_chapters.py grades every answer set under one student name, so it sees one seed per
exercise. An overfit answer can still pass the hidden checks for other students, whenever their
drawn inputs happen to look like the visible ones (a batch of two, a repeat count of five). This
audit runs each answer set's notebook once, then the hidden checks for SEEDS students, and judges
every (student, exercise) with the judge's own `verdict` against the reference's records:
alternative must pass for every seed, wrong, other_wrong and overfit must fail for every seed, and so
must course_copy and more_wrong on the exercises they answer.

    make audit-seeds                      # every chapter, 8 students (about 7 minutes on 2 cores)
    .venv/bin/python tests/seed_audit.py 08_gpu_training --seeds 20

Not part of `make test` (it would double the grading time): run it after changing an exercise.
Exit status 1 when any verdict depends on the seed.
"""
import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))        # conftest's load_answers
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("COURSE_QUICK", "1")
os.environ.setdefault("COURSE_OFFLINE", "1")

import nbformat  # noqa: E402

from conftest import ALL_CHAPTERS, ANSWER_SETS, load_answers, partial_sets  # noqa: E402
from grader.course import source_notebook  # noqa: E402
from grader.judge.preprocessor import verdict  # noqa: E402
from grader.judge.probes import ProbeError, hidden_section, read_probe, without_hidden_section  # noqa: E402
from grader.judge.reference import run_with_probes  # noqa: E402
from submissions import with_answers  # noqa: E402

def _records(outputs: dict) -> dict:
    records = {}
    for (student, grade_id), cell_outputs in outputs.items():
        try:
            records[(student, grade_id)] = read_probe(cell_outputs, grade_id)
        except ProbeError as err:
            records[(student, grade_id)] = err
    return records


def _as_handed_in(nb):
    """What a student's kernel runs: the test cells without their hidden sections."""
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.source = without_hidden_section(cell.source)
    return nb


def audit(chapter: str, seeds: int) -> list:
    """One line per (answer set, exercise) whose verdict is not the expected one for every seed."""
    solution = source_notebook(chapter)
    reference_nb = nbformat.read(solution, as_version=4)
    hidden = {c.metadata["nbgrader"]["grade_id"]: hidden_section(c.source) for c in reference_nb.cells
              if c.metadata.get("nbgrader", {}).get("grade") and hidden_section(c.source)}
    students = [f"audit{i}" for i in range(seeds)]

    def run(nb):
        return _records(run_with_probes(nb, solution, chapter, chapter, hidden, students, timeout=300))

    reference = run(reference_nb)
    answers = load_answers(chapter)
    problems = []
    sets = [(name, answers[name], should_pass, hidden) for name, should_pass in ANSWER_SETS.items()]
    sets += [(name, answered, False, [f"{g}_tests" for g in answered]) for name, answered in partial_sets(answers).items()]
    for name, answered, should_pass, judged in sets:
        got = run(_as_handed_in(with_answers(reference_nb, answered)))
        for grade_id in judged:
            wrong_way = [s for s in students
                         if (verdict(got[(s, grade_id)], reference[(s, grade_id)]) is None) != should_pass]
            if wrong_way:
                problems.append(f"{chapter} {name} {grade_id}: {'fails' if should_pass else 'passes'} "
                                f"for {len(wrong_way)} of {seeds} students")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", nargs="*", default=ALL_CHAPTERS)
    parser.add_argument("--seeds", type=int, default=8)
    args = parser.parse_args(argv)
    problems = []
    for chapter in args.chapters:
        found = audit(chapter, args.seeds)
        print("\n".join(found) or f"{chapter}: every answer set gets the same verdict for {args.seeds} students",
              flush=True)
        problems += found
    # again at the end, below whatever the kernels wrote on stderr
    print("---- seed audit ----\n" + ("\n".join(problems) or
          f"{len(args.chapters)} chapters: every verdict is the same for {args.seeds} students"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
