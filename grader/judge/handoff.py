"""What the course's preprocessors hand each other in nbgrader's `resources`, in one place.

nbgrader passes one `resources` dict from preprocessor to preprocessor; the course's keep their
data under one key, "judge", with these fields (docs/GRADING.md, "Who decides a grade"):
"""
from dataclasses import dataclass, field

from grader.judge.probes import gradebook_hidden_sections

KEY = "judge"


@dataclass
class JudgeHandoff:
    # SandboxedExecute -> Judge: {grade id: hidden section} of the notebook's judged test cells,
    # read once, by `hidden_sections`; None until then
    hidden: dict | None = None
    # SandboxedExecute -> Judge: {grade id: the probe cell's outputs}, untrusted (the student's kernel)
    probes: dict = field(default_factory=dict)
    # Judge -> FlagForManualGrading: {grade id: why the scan flagged the exercise's code}
    flags: dict = field(default_factory=dict)
    # Judge -> MarkKernelDecided: grade ids of ordinary test cells, which nbgrader's own rule decided
    kernel_decided: list = field(default_factory=list)


def handoff(resources) -> JudgeHandoff:
    """The notebook's handoff, created empty by the first preprocessor that asks."""
    found = resources.get(KEY)
    if not isinstance(found, JudgeHandoff):
        found = resources[KEY] = JudgeHandoff()
    return found


def hidden_sections(resources) -> dict:
    """{grade id: hidden section} of the notebook's judged test cells, read from the gradebook (which
    keeps test cells whole, whatever the student did to theirs) by the first preprocessor that asks."""
    shared = handoff(resources)
    if shared.hidden is None:
        info = resources["nbgrader"]
        shared.hidden = gradebook_hidden_sections(info["db_url"], info["notebook"], info["assignment"])
    return shared.hidden
