"""Every path that grades runs student code behind the wall and lets the judge decide.

Three paths: `make autograde` (grader.class_grading.autograde, tested in test_hostile.py::reads_solutions),
plain `nbgrader autograde` in the course directory, and the formgrader's Autograde button
(nbgrader's NbGraderAPI.autograde, loaded the way the formgrader loads it). Each grades a student
whose notebook tries to read the instructor's solutions by absolute and relative path, next to an
honest classmate.
"""
import json
from pathlib import Path

import pytest
from traitlets.config.loader import PyFileConfigLoader

from grader import pipeline
from grader.course import REPO_ROOT, nbgrader_api, run_nbgrader
from gradebook_rows import cell_scores
from submissions import copy_course, place_submission, release_copy, solution_copy
from hostile.tiny import add_tiny_assignment

CHEAT = '''
import json, os
found = []
for path in [{absolute!r}, "../../../solutions/{name}/{name}.ipynb", "../../solutions/{name}/{name}.ipynb"]:
    try:
        for cell in json.load(open(path))["cells"]:
            if cell["metadata"].get("nbgrader", {{}}).get("solution"):
                exec("".join(cell["source"]))
        found.append(path)
    except OSError as err:
        pass
print("solutions read:", found)
'''

# What the formgrader's Autograde button calls, on the API the formgrader builds (grader.course).
FORMGRADER = "import json\nprint(json.dumps(api.autograde(sys.argv[1], sys.argv[2])))"


def test_every_path_is_configured_with_the_wall_and_the_judge():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO_ROOT)).load_config()
    assert config.Autograde.autograde_preprocessors == pipeline.AUTOGRADE
    assert config.Autograde.sanitize_preprocessors == pipeline.SANITIZE
    assert pipeline.AUTOGRADE[0].endswith("SandboxedExecute"), "nbgrader's own Execute has no wall"
    assert pipeline.AUTOGRADE.index("grader.judge.preprocessor.Judge") < pipeline.AUTOGRADE.index(
        "nbgrader.preprocessors.SaveAutoGrades"), "the judge's verdicts must exist before scores are saved"
    assert pipeline.SANITIZE[-1].endswith("StripHiddenTests"), "hidden sections out before the notebook is written"


@pytest.fixture(scope="module")
def tiny_course(tmp_path_factory):
    """A course with the tiny assignment, a cheat and an honest student handed in; the cheat's
    notebook is returned too, for the formgrader's test to hand in later."""
    course = copy_course(tmp_path_factory.mktemp("paths") / "course").resolve()
    name = add_tiny_assignment(course)
    cheat = release_copy(name, course)
    absolute = str(course / "solutions" / name / f"{name}.ipynb")
    for cell in cheat.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "double":
            cell.source = CHEAT.format(absolute=absolute, name=name) + "\n" + cell.source
    place_submission(course, "cheat_cli", name, cheat)
    place_submission(course, "honest", name, solution_copy(name, course))
    return course, name, cheat


def _outputs(course: Path, student: str, name: str) -> str:
    nb = json.loads((course / "autograded" / student / name / f"{name}.ipynb").read_text())
    return "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))


def test_plain_nbgrader_autograde(tiny_course):
    course, name, _ = tiny_course
    proc = run_nbgrader("autograde", name, course=course)   # both students, one nbgrader process
    # neither changed a test cell: no "Attribute 'checksum' for cell ... has changed" warning for either
    assert "has changed" not in proc.stdout + proc.stderr
    assert "solutions read: []" in _outputs(course, "cheat_cli", name)
    assert all(score == 0 for score, _ in cell_scores(course, name, "cheat_cli").values())
    assert all(score == top for score, top in cell_scores(course, name, "honest").values())
    honest = _outputs(course, "honest", name)
    assert "not run while grading" in honest and "the demonstration ran" not in honest


def test_formgrader_autograde_button(tiny_course):
    course, name, cheat = tiny_course
    place_submission(course, "cheat_formgrader", name, cheat)
    proc = nbgrader_api(FORMGRADER, name, "cheat_formgrader", course=course, timeout=600)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["success"], result.get("log", "")[-3000:]
    assert "solutions read: []" in _outputs(course, "cheat_formgrader", name)
    assert all(score == 0 for score, _ in cell_scores(course, name, "cheat_formgrader").values())
