"""notebooks/ is generated from solutions/ and must hold nothing students shouldn't see."""
import re

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from conftest import ALL_CHAPTERS
from grader.course import REPO_ROOT, release_notebook, source_notebook
from grader.pipeline import STUB

HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)


def test_every_chapter_is_released():
    released = sorted(p.name for p in (REPO_ROOT / "notebooks").iterdir() if p.is_dir())
    assert released == ALL_CHAPTERS, "run `make release`: notebooks/ and solutions/ list different chapters"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_release_matches_committed(course, chapter):
    """Regenerating the student version from solutions/ gives exactly the committed files."""
    committed = REPO_ROOT / "notebooks" / chapter
    regenerated = course / "notebooks" / chapter
    names = sorted(p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file())
    fresh = sorted(p.relative_to(regenerated).as_posix() for p in regenerated.rglob("*") if p.is_file())
    assert names == fresh, f"files differ: run `make release` and commit notebooks/{chapter}"
    for name in names:
        assert (committed / name).read_bytes() == (regenerated / name).read_bytes(), (
            f"notebooks/{chapter}/{name} is stale or hand-edited: run `make release` and commit it")


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_release_has_no_solutions_hidden_tests_or_outputs(chapter):
    source = nbformat.read(source_notebook(chapter), as_version=4)
    student = nbformat.read(release_notebook(chapter), as_version=4)
    text = "\n".join(cell.source for cell in student.cells)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    for cell in student.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "the release must carry no outputs"
    # No line of a hidden test leaks, not even without its markers.
    hidden_lines = {line.strip() for cell in source.cells for block in HIDDEN_BLOCK.findall(cell.source)
                    for line in block.splitlines() if len(line.strip()) > 20}
    student_lines = {line.strip() for cell in student.cells for line in cell.source.splitlines()}
    visible_lines = {line.strip() for cell in source.cells
                     for line in HIDDEN_BLOCK.sub("", cell.source).splitlines()}
    leaked = (hidden_lines - visible_lines) & student_lines
    assert not leaked, f"hidden test lines in the student release: {sorted(leaked)[:3]}"
    # Every solution cell became a stub.
    for cell in student.cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
            assert STUB in cell.source


def test_notebooks_store_the_metadata_jupyterlab_writes():
    """JupyterLab stores the kernel's language_info in a notebook it opens: a notebook stored with
    less opens already modified. Solutions and releases carry what this course's kernel reports."""
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        language_info = kc.kernel_info(reply=True, timeout=60)["content"]["language_info"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    for chapter in ALL_CHAPTERS:
        for path in (source_notebook(chapter), release_notebook(chapter)):
            meta = nbformat.read(path, as_version=4).metadata
            assert meta.language_info == language_info, f"{path}: run `make outputs` and `make release`"
            assert meta.kernelspec == {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
