"""nbgrader configuration: the repository root is the course directory.

Instructors run plain nbgrader here (generate_assignment, autograde, generate_feedback, export,
the formgrader in JupyterLab); the Makefile verbs and `python -m grader` wrap the same commands.
Each setting below guards against a pitfall that tests/test_nbgrader_config.py exercises.
"""
import os

from grader.course import COURSE_ID, EXCHANGE, RELEASE, SOURCE
from grader import gradebook_schema

# New gradebooks get their schema version without nbgrader's `alembic heads` process (1.3 CPU-s each)
gradebook_schema.install()

c = get_config()  # noqa: F821 (injected by traitlets)

HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = COURSE_ID
c.CourseDirectory.source_directory = SOURCE   # instructor notebooks with solutions + hidden tests
c.CourseDirectory.release_directory = RELEASE  # the student version, committed, generated
c.Exchange.root = os.path.join(HERE, EXCHANGE)   # local exchange, so the assignment list works

# The per-cell limit. It must be Execute.timeout: ExecutePreprocessor.timeout is silently ignored.
# A cell that runs longer is interrupted and scores 0; the rest of the notebook still runs.
c.Execute.timeout = 120

# nbgrader's Validate gives 0 to any test cell that writes to stderr, and a PyTorch or matplotlib
# warning is enough. Drop stderr chunks that are warnings; errors (tracebacks) still count as failures.
# (Autograde does not need it: the judge decides test cells from data, not from their outputs.)
c.IgnorePattern.enabled = True
c.IgnorePattern.pattern = r"\w*Warning: |warnings\.warn\("

# Students delete test cells; put them back (from the gradebook) before grading.
c.OverwriteCells.add_missing_cells = True


# Every Collect (`nbgrader collect`, the formgrader's button) goes through the course's gate: only a
# student's own hand-ins, never a link, a date from the future or a classmate's name; what it refuses is
# moved to the exchange's quarantine/ (grader/gated_collect.py, docs/GRADING.md "The exchange").
c.ExchangeFactory.collect = "grader.gated_collect.GatedCollect"

# Every grading path (make autograde, plain `nbgrader autograde`, the formgrader's button) runs
# this pipeline: student code behind the wall, grades decided outside it (grader/pipeline.py).
from grader import pipeline  # noqa: E402

c.GenerateAssignment.preprocessors = pipeline.RELEASE
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\n" + pipeline.STUB}   # nbgrader's says nothing
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.Autograde.sanitize_preprocessors = pipeline.SANITIZE
c.Autograde.autograde_preprocessors = pipeline.AUTOGRADE
# A test cell without `def hidden_checks(check, rng)` (your own ordinary nbgrader homework) is graded
# by nbgrader's own rule in the student's kernel, and marked so in the formgrader. To refuse such
# cells instead, so that every grade is the judge's (docs/GRADING.md, "Ordinary nbgrader cells"):
# c.Judge.require_hidden_checks = True

# Feedback HTML must not show hidden tests (nbgrader #917): strip them and their tracebacks.
c.GenerateFeedback.preprocessors = pipeline.FEEDBACK
c.HideHiddenTests.enforce_metadata = False
