"""`make lab` starts JupyterLab with nbgrader's student extensions answering."""
import json


def test_nbgrader_lab_extension_is_installed(lab):
    names = [ext["name"] for ext in lab.call("/lab/api/extensions")]
    assert "jupyter-nbgrader" in names, names


def test_assignment_list_answers(lab):
    """The workspace's nbgrader_config.py points the Assignments tab at the course's exchange."""
    reply = lab.call("/assignments?course_id=pytorch-course")
    assert reply["success"] is True, reply


def test_students_see_their_workspace_not_solutions(lab):
    listing = {item["name"] for item in lab.call("/api/contents")["content"]}
    assert "01_tensors" in listing and "solutions" not in listing, listing


def test_validate_reports_unsolved_exercises(lab):
    reply = lab.call("/assignments/validate", {"path": "01_tensors/01_tensors.ipynb"})
    assert reply["success"] is True, reply
    failed = reply["value"].get("failed", [])
    assert failed and "NotImplementedError" in json.dumps(failed)
