"""nbgrader is configured against its known pitfalls.

Each setting is also proven by a real grading run, in tests/test_hostile.py's class (one run for
all of them): `infinite_loop` (Execute.timeout, overridden there to 10 s, interrupts one cell and
the rest still scores: 9/10), `with_warnings` (a UserWarning on stderr keeps full marks),
`tests_edited` and `tests_deleted` (test cells restored from the gradebook, add_missing_cells).
"""
from traitlets.config.loader import PyFileConfigLoader

from grader.course import REPO_ROOT


def load_config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(REPO_ROOT)).load_config()


def test_config_uses_execute_timeout_not_executepreprocessor():
    config = load_config()
    assert config.Execute.timeout >= 60, "training cells need a generous per-cell limit"
    assert "ExecutePreprocessor" not in config, "nbgrader ignores ExecutePreprocessor.timeout"
    assert config.IgnorePattern.enabled and config.IgnorePattern.pattern
    assert config.OverwriteCells.add_missing_cells is True
    assert config.CourseDirectory.source_directory == "solutions"
    assert config.CourseDirectory.release_directory == "notebooks"
