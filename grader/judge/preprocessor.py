"""Judge: decides every test cell's grade in the grader's process, from data, never in the kernel.

For each test cell with hidden checks it compares the student's probe record (untrusted) with the
reference's, check by check (grader/judge/compare.py), and replaces the cell's outputs with the verdict,
which SaveAutoGrades scores. Ordinary nbgrader test cells keep nbgrader's own rule. It also scans
the student's code (grader/judge/scan.py) for FlagForManualGrading. What it hands the other
preprocessors: grader/judge/handoff.py. The design and its threat model: docs/GRADING.md,
"Who decides a grade" and "Ordinary nbgrader cells".
"""
import json
from pathlib import Path

import nbformat
from nbgrader import utils
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Integer, Unicode

from grader import timings
from grader.pipeline import REFERENCE_CELL_SECONDS
from grader.class_grading.autograde import students_with_handins
from grader.judge.compare import check_failures
from grader.judge.handoff import handoff, hidden_sections
from grader.judge.outcomes import write_outcome
from grader.judge.probes import ProbeError, exception_name, read_probe
from grader.judge.reference import records_from_saved, reference_records
from grader.judge.scan import module_names, scan

KERNEL_TEXT_LIMIT = 4000   # characters of the kernel's own output kept in a test cell
KERNEL_DECIDED = "the student's kernel"   # where an ordinary test cell's grade is decided


def _as_text(outputs) -> str:
    parts = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(out.get("text", ""))
        elif kind == "error":
            parts.append(f"{out.get('ename', '')}: {out.get('evalue', '')}\n")
        elif kind in ("execute_result", "display_data"):
            parts.append(str(out.get("data", {}).get("text/plain", "")) + "\n")
    text = "".join(parts)
    return text if len(text) <= KERNEL_TEXT_LIMIT else text[:KERNEL_TEXT_LIMIT] + "\n[...cut]\n"


def quotes_hidden(text: str, hidden_code: str) -> bool:
    """Does `text` hold a line of the hidden section? The verdict and the kernel's printout are built
    from student data; this is the last guard that no hidden line reaches the notebook or feedback."""
    lines = {line.strip() for line in hidden_code.splitlines()}
    return any(len(line) >= 12 and line in text for line in lines)


def verdict(student, reference) -> str | None:
    """None if every reference check has a passing student check of the same name, else why not
    (the first check that fails)."""
    failed = failures(student, reference)
    return failed[0][1] if failed else None


def failures(student, reference) -> list:
    """[(check name or None, why)] for every check the student's record fails."""
    if isinstance(student, ProbeError):
        return [(None, f"the grader's checks could not run: {student}")]
    return check_failures(student, reference)


class Judge(NbGraderPreprocessor):
    timeout = Integer(REFERENCE_CELL_SECONDS, help="seconds per cell of the reference run").tag(config=True)
    require_hidden_checks = Bool(False, help="refuse a test cell without `def hidden_checks(check, rng)` "
                                 "instead of grading it by nbgrader's rule in the student's kernel").tag(config=True)
    reference_dir = Unicode("", help="a folder of <notebook>.json files, each a reference run made once for "
                            "the class (grader/judge/reference.py, saved_reference); used where it matches "
                            "the solution and the hidden tests, else the reference is run here").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        course = CourseDirectory(parent=self)
        shared = handoff(resources)
        hidden = hidden_sections(resources)
        solution = Path(course.format_path(course.source_directory, ".", info["assignment"])) / f"{info['notebook']}.ipynb"
        tests = [c.metadata.nbgrader["grade_id"] for c in nb.cells if c.cell_type == "code"
                 and utils.is_grade(c) and not utils.is_solution(c)]
        ordinary = [grade_id for grade_id in tests if grade_id not in hidden]
        if ordinary and self.require_hidden_checks:
            raise RuntimeError(f"test cell {ordinary[0]} has no hidden checks, and this course requires them "
                               "(Judge.require_hidden_checks): every test cell needs `def hidden_checks(check, rng)` "
                               "in its hidden section")
        reference = self._reference(course, info, solution, hidden) if hidden else {}
        probes = shared.probes
        flags = shared.flags = self._scan(nb, solution)
        shared.kernel_decided = ordinary
        outcomes = {}
        for cell in nb.cells:
            if cell.cell_type != "code" or not utils.is_grade(cell) or utils.is_solution(cell):
                continue
            grade_id = cell.metadata.nbgrader["grade_id"]
            if grade_id in ordinary:
                # nbgrader's rule on the kernel's own outputs (SaveAutoGrades), as in stock nbgrader
                cell.metadata["judge"] = {"decided_in": KERNEL_DECIDED}
                outcomes[grade_id] = {"decided_in": KERNEL_DECIDED, "flagged": flags.get(grade_id)}
                continue
            try:
                student = read_probe(probes.get(grade_id, []), grade_id)
            except ProbeError as err:
                student = err
            failed = failures(student, reference[grade_id])
            why = failed[0][1] if failed else None
            # kept for instructors and tests: did the visible asserts pass in the student's kernel?
            # (informative only: the grade is the verdict's alone)
            raised = [o.get("ename") for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            cell.metadata["judge"] = {"visible_tests": f"raised {exception_name(raised[0])}" if raised else "passed"}
            outputs = self._outputs(cell, why, len(reference[grade_id].checks), flags.get(grade_id))
            if any(quotes_hidden(str(o.get("text", "")) + str(o.get("evalue", "")), hidden.get(grade_id, ""))
                   for o in outputs):
                cell.metadata["judge"]["withheld"] = "the verdict or printout quoted the hidden tests"
                outputs = self._outputs({}, "the result could not be shown (it quoted the hidden tests)",
                                        len(reference[grade_id].checks), flags.get(grade_id)) if why else \
                    self._outputs({}, None, len(reference[grade_id].checks), flags.get(grade_id))
            cell.outputs = outputs
            outcomes[grade_id] = {"decided_in": "judge", "checks": len(reference[grade_id].checks),
                                  "failed": [{"check": name, "why": text} for name, text in failed],
                                  "visible_tests": cell.metadata["judge"]["visible_tests"],
                                  "flagged": flags.get(grade_id)}
        handed_in = course.format_path(course.submitted_directory, info["student"], info["assignment"])
        write_outcome(course.root, info["assignment"], info["student"], info["notebook"], outcomes,
                      course.get_existing_timestamp(handed_in))
        return nb, resources

    def _reference(self, course, info, solution: Path, hidden: dict) -> dict:
        """{grade_id: ProbeRecord} of the reference for this student: from `reference_dir` when it holds
        a matching run, else one reference run for every student this nbgrader run grades (--student
        narrows it), cached in this process for the ones after this one."""
        saved = Path(self.reference_dir) / f"{info['notebook']}.json" if self.reference_dir else None
        if saved is not None and saved.is_file():
            records = records_from_saved(json.loads(saved.read_text()), solution, hidden, [info["student"]])
            if records is not None:
                return records[info["student"]]
            self.log.warning("%s was made for another solution or class: running the reference here", saved)
        handed_in = sorted(set(students_with_handins(course.root, info["assignment"], course.submitted_directory,
                                                     course.student_id)) | {info["student"]})
        with timings.timed(timings.REFERENCE):
            return reference_records(solution, info["assignment"], info["notebook"], hidden, handed_in,
                                     timeout=self.timeout)[info["student"]]

    @staticmethod
    def _outputs(cell, why, checks, flag) -> list:
        outputs = []
        text = _as_text(cell.get("outputs", []))
        if text.strip():
            outputs.append(nbformat.v4.new_output("stream", name="stdout",
                                                  text="Your notebook printed:\n" + text))
        if flag:
            outputs.append(nbformat.v4.new_output(
                "stream", name="stdout", text=f"Flagged for manual grading: {flag}\n"))
        if why is None:
            outputs.append(nbformat.v4.new_output(
                "stream", name="stdout", text=f"Grader: passed all {checks} hidden checks.\n"))
        else:
            outputs.append(nbformat.v4.new_output(
                "error", ename="GraderCheckFailed", evalue=why, traceback=[f"GraderCheckFailed: {why}"]))
        return outputs

    @staticmethod
    def _scan(nb, solution: Path) -> dict:
        """{grade_id: reasons} for code the student wrote or changed. A cell's reasons flag the next
        test cell after it (the exercise it belongs to), or the last one. A code answer graded by hand
        (graded and a solution) is student code like any other: scanned, and never given the flags,
        which would be lost there (the judge reports test cells only)."""
        instructor = {c.source for c in nbformat.read(solution, as_version=4).cells if c.cell_type == "code"}
        modules = module_names([c.source for c in nb.cells if c.cell_type == "code"])
        flags, pending = {}, []
        grade_ids = []
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            if utils.is_solution(cell):
                pending += scan(cell.source, modules)
                continue
            if utils.is_grade(cell):
                grade_id = cell.metadata.nbgrader["grade_id"]
                grade_ids.append(grade_id)
                if pending:
                    flags[grade_id] = "; ".join(pending)
                    pending = []
                continue
            if utils.is_locked(cell) or cell.source in instructor:
                continue   # the instructor's own code, unchanged (locked cells are put back before grading)
            pending += scan(cell.source, modules)
        if pending and grade_ids:
            last = grade_ids[-1]
            flags[last] = "; ".join(filter(None, [flags.get(last), "; ".join(pending)]))
        return flags
