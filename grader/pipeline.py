"""The grading pipeline, stage by stage, as nbgrader runs it (nbgrader_config.py installs it).

One submission, from `make autograde` (grader/autograde.py: batches in scratch courses), plain
`nbgrader autograde`, or the formgrader's Autograde button, goes through nbgrader's two passes:

SANITIZE (the submission -> autograded/<student>/<assignment>/, before anything runs)
AUTOGRADE (that notebook -> scores in the gradebook, the graded notebook for feedback)

The order matters where commented.
"""

# Cells with this tag only demonstrate (a torchrun launch, DataLoader workers, a second model's
# training): nothing graded uses what they compute, so grading skips them, in the student's kernel
# and in the reference run alike. JupyterLab and nbval ignore the tag: students and CI run them.
SKIP_WHEN_GRADING = "skip-when-grading"

SANITIZE = [
    "nbgrader.preprocessors.ClearOutput",
    "grader.preprocessors.deduplicate_ids.DeduplicateIds",      # nbgrader's crashes on a copied test cell
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",                    # test cells back from the gradebook...
    "nbgrader.preprocessors.CheckCellMetadata",
    "grader.preprocessors.strip_hidden_tests.StripHiddenTests",  # ...minus their hidden sections
]

AUTOGRADE = [
    # the notebook behind the wall, output capped; then the probes, in the same kernel
    "grader.preprocessors.sandboxed_execute.SandboxedExecute",
    # the reference run and the comparison; replaces every test cell's outputs with the verdict
    "grader.preprocessors.judge.Judge",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",                    # scores from the verdicts
    "grader.preprocessors.flag_for_manual_grading.FlagForManualGrading",  # after SaveAutoGrades
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

FEEDBACK = [
    "nbgrader.preprocessors.GetGrades",
    "grader.feedback.HideHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
