"""ApplyExtension: the student's own due date (extensions.csv) into the gradebook, before the late penalty.

nbgrader's AssignLatePenalties counts lateness from SubmittedAssignment.duedate, which is the
assignment's due date plus the submission's extension; this sets that extension from the course's
extensions file (grader/extensions.py), on every grading path: plain `nbgrader autograde`, and the
scratch courses of `make autograde`, which get the file with the assignment. Without the file it
changes nothing, so extensions granted through nbgrader's own API stay.
"""
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.extensions import extension_for, read_extensions


class ApplyExtension(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        extensions = read_extensions(CourseDirectory(parent=self).root)
        if extensions is None:
            return nb, resources
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(info["assignment"], info["student"])
            submission.extension = extension_for(extensions, info["student"], info["assignment"],
                                                 submission.assignment.duedate)
            gb.db.commit()
        return nb, resources
