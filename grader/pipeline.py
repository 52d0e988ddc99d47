"""The grading pipeline, stage by stage, as nbgrader runs it (nbgrader_config.py installs it).

One submission, from `make autograde` (grader/class_grading/autograde.py: batches in scratch courses), plain
`nbgrader autograde`, or the formgrader's Autograde button, goes through nbgrader's two passes:

SANITIZE (the submission -> autograded/<student>/<assignment>/, before anything runs)
AUTOGRADE (that notebook -> scores in the gradebook, the graded notebook for feedback)

The order matters where commented.
"""

# Seconds per cell of the judge's reference run (Judge.timeout's default): the instructor's code
# and a whole class's probes run in it.
REFERENCE_CELL_SECONDS = 120

# Cells with this tag only demonstrate (a torchrun launch, DataLoader workers, a second model's
# training): nothing graded uses what they compute, so grading skips them, in the student's kernel
# and in the reference run alike. JupyterLab and nbval ignore the tag: students and CI run them.
SKIP_WHEN_GRADING = "skip-when-grading"

# Graded kernels, the student's behind the wall and the reference's, run torch on one thread.
# Grading runs notebooks side by side, where threads inside one notebook only compete for the
# cores (four chapters' solutions, two at a time: 40 CPU-s instead of 53), and no value then
# depends on how many cores the grading machine has.
GRADING_THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

# Graded kernels, the student's and the reference's, build figures but never draw them: matplotlib's
# inline backend sends each figure as its text only ("<Figure size 640x480 with 1 Axes>"), not a PNG.
# Nothing graded reads a picture, and drawing them cost every hand-in: a graded run of the 11 chapters'
# solutions took 77.6 CPU-s drawing, 72.1 without (2026-11-30, two rounds alternated, 2 cores).
GRADING_KERNEL_ARGS = ("--InlineBackend.figure_formats=set()",)

# What an open exercise's solution cell holds in the release: it says what to do when it is run.
STUB_MESSAGE = "not done yet: replace this line with your solution"
STUB = f'raise NotImplementedError("{STUB_MESSAGE}")'

# generate_assignment (make release, the formgrader's Generate button): nbgrader's own list, then
# the raises-exception tag on exercise cells, so that Run All reads to the end of a release.
RELEASE = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.InstantiateTests",
    "nbgrader.preprocessors.LockCells",
    "nbgrader.preprocessors.ClearSolutions",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.CheckCellMetadata",
    "nbgrader.preprocessors.ComputeChecksums",
    "nbgrader.preprocessors.SaveCells",
    "nbgrader.preprocessors.ClearHiddenTests",            # after ComputeChecksums and SaveCells
    "nbgrader.preprocessors.ClearMarkScheme",
    "nbgrader.preprocessors.ComputeChecksums",            # again, after ClearHiddenTests
    "nbgrader.preprocessors.CheckCellMetadata",
    "grader.preprocessors.tag_cells_that_raise.TagCellsThatRaise",
]

SANITIZE = [
    "nbgrader.preprocessors.ClearOutput",
    "grader.preprocessors.reattach_metadata.ReattachMetadata",  # cells an editor stripped of their metadata
    "grader.preprocessors.deduplicate_ids.DeduplicateIds",      # nbgrader's crashes on a copied test cell
    "nbgrader.preprocessors.OverwriteKernelspec",
    "grader.preprocessors.restore_test_cells.RestoreTestCells",  # untouched ones quietly (no warning)...
    "grader.preprocessors.overwrite_cells.OverwriteCells",      # test cells back from the gradebook, missing ones too...
    "nbgrader.preprocessors.CheckCellMetadata",
    "grader.preprocessors.strip_hidden_tests.StripHiddenTests",  # ...minus their hidden sections
]

AUTOGRADE = [
    # the notebook behind the wall, output capped; then the probes, in the same kernel
    "grader.wall.execute.SandboxedExecute",
    # the reference run and the comparison; replaces every test cell's outputs with the verdict
    "grader.judge.preprocessor.Judge",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",                    # scores from the verdicts
    "grader.preprocessors.flag_for_manual_grading.FlagForManualGrading",  # after SaveAutoGrades
    "grader.preprocessors.mark_kernel_decided.MarkKernelDecided",         # after SaveAutoGrades
    "grader.preprocessors.apply_extension.ApplyExtension",  # the student's own due date (extensions.csv)...
    "nbgrader.preprocessors.AssignLatePenalties",           # ...from which lateness counts
    "nbgrader.preprocessors.CheckCellMetadata",
]

FEEDBACK = [
    "nbgrader.preprocessors.GetGrades",
    "grader.feedback.HideHiddenTests",
    "grader.feedback.DueDateNote",            # the student's own due date, and whether the hand-in was late
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
