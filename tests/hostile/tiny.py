"""A tiny nbgrader assignment (two exercises, seconds to grade) for the harness's own tests.

The harness's behaviour (merging, walls, feedback) does not depend on what a chapter teaches, so
tests that grade many submissions use this one; tests/test_hostile.py uses chapter 01_tensors.
"""
from pathlib import Path

from grader.authoring import code, md, solution, tests, write_notebook
from grader.pipeline import SKIP_WHEN_GRADING
from grader.release import release

NAME = "00_tiny"

DOUBLE_HIDDEN = """def hidden_checks(check, rng):
                check("doubles a tensor", double(torch.randn(3, generator=rng)))
                check("doubles a plain int", double(3))"""


def cells():
    return [
        md("# A tiny assignment\nTwo exercises, for the grading harness's tests."),
        code("import torch"),
        solution("double", """
            def double(x):
                ### BEGIN SOLUTION
                return 2 * x
                ### END SOLUTION
            """),
        tests("double_tests", f"""
            out = double(torch.ones(2))
            assert isinstance(out, torch.Tensor), "return a tensor"
            assert torch.equal(out, torch.full((2,), 2.0)), "expected twice the input"
            ### BEGIN HIDDEN TESTS
            {DOUBLE_HIDDEN}
            ### END HIDDEN TESTS
            """, points=2),
        # A demonstration that grading skips, in the student's kernel and in the reference run:
        # were it run on one side only, `double` would differ there and no answer could pass.
        code("""
            print("the demonstration ran")
            double = lambda x: 3 * x
            """, tags=[SKIP_WHEN_GRADING]),
        solution("answer", """
            ### BEGIN SOLUTION
            ANSWER = 42
            ### END SOLUTION
            """),
        tests("answer_tests", """
            assert isinstance(ANSWER, int), "ANSWER is an int"
            ### BEGIN HIDDEN TESTS
            def hidden_checks(check, rng):
                check("the answer", ANSWER)
            ### END HIDDEN TESTS
            """, points=1),
    ]


def add_tiny_assignment(course: Path) -> str:
    """Write solutions/00_tiny/00_tiny.ipynb into `course` and release it (fills its gradebook)."""
    write_notebook(cells(), Path(course) / "solutions" / NAME / f"{NAME}.ipynb")
    release([NAME], course=course)
    return NAME
