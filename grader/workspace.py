"""The student's workspace: working copies of the chapters that nothing else overwrites.

    workspace/                  gitignored: `git pull`, `make release` and course updates never touch it
      .releases.json            the release each file was copied from (its sha256)
      01_tensors/01_tensors.ipynb
      ...

`make lab` calls `sync()` and opens JupyterLab there. A chapter the workspace lacks is copied in
whole; a file the student has never changed is replaced by its newer release; a notebook the
student has changed is never touched: beside it, `<name>.updated.ipynb` holds the newer release
with the student's answers (solution cells, matched by nbgrader's grade ids) carried over, and its
self-check cell checking that file.
"""
import hashlib
import json
import shutil
from pathlib import Path

import nbformat

from grader.course import COURSE_ID, EXCHANGE, RELEASE, REPO_ROOT
from grader.selfcheck import lacking_exercises, name_in_check_cell

WORKSPACE = "workspace"
RECORD = ".releases.json"
UPDATED = ".updated.ipynb"
# JupyterLab's Assignments tab reads nbgrader_config.py from the folder JupyterLab serves: this one
# points it at the course's exchange, and puts what Fetch brings in under workspace/<course id>/.
STUDENT_CONFIG = """\
# Written by `make lab` (grader/workspace.py): the Assignments tab's view of the course.
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {exchange!r}
c.Exchange.path_includes_course = True   # Fetch -> workspace/{course_id}/<assignment>/
"""


def _sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _free_name(dst: Path) -> Path:
    """<name>.updated.ipynb, or .updated-2, -3...: a file the student may be working in stays."""
    candidate, n = dst.with_name(dst.stem + UPDATED), 1
    while candidate.exists():
        n += 1
        candidate = dst.with_name(f"{dst.stem}.updated-{n}.ipynb")
    return candidate


def carry_answers(student_nb, new_release):
    """The new release with every solution cell the student filled in carried over by grade id."""
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in student_nb.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    merged = nbformat.from_dict(new_release)
    for cell in merged.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell.source = answers[meta["grade_id"]]
    return merged


def sync(course: Path = REPO_ROOT, workspace: Path | None = None) -> list:
    """Bring the releases in `course`/notebooks into the workspace without losing any work.
    Returns one message per thing done, for the student."""
    releases = Path(course) / RELEASE
    workspace = Path(workspace) if workspace else Path(course) / WORKSPACE
    workspace.mkdir(exist_ok=True)
    record_path = workspace / RECORD
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    messages = []
    for src in sorted(p for p in releases.rglob("*") if p.is_file() and ".ipynb_checkpoints" not in p.parts):
        name = src.relative_to(releases).as_posix()
        dst, released = workspace / name, _sha(src)
        if record.get(name) == released and dst.exists():
            continue                                    # nothing new since the student's copy
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            messages.append(f"new: {name}")
        elif _sha(dst) in (record.get(name), released):
            shutil.copyfile(src, dst)                   # the student never changed it
            messages.append(f"updated to the newer release (you had not changed it): {name}")
        elif src.suffix == ".ipynb":
            updated = _free_name(dst)
            merged = carry_answers(nbformat.read(dst, as_version=4), nbformat.read(src, as_version=4))
            # the self-check cell is no nbgrader cell (not locked, no grade id, no checksum): safe to edit
            nbformat.write(name_in_check_cell(merged, updated.name), updated)
            lacking = lacking_exercises(dst, src)
            messages.append(f"{name} has a newer release. Your copy is untouched; "
                            f"{updated.relative_to(workspace).as_posix()} is the new release "
                            f"with your answers carried over"
                            + (f": work in and hand in that one (yours lacks {', '.join(lacking)})." if lacking
                               else "."))
        else:
            messages.append(f"{name} has a newer release in {RELEASE}/; your changed copy is untouched.")
        record[name] = released
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    (workspace / "nbgrader_config.py").write_text(STUDENT_CONFIG.format(
        course_id=COURSE_ID, exchange=str((Path(course) / EXCHANGE).resolve())))
    return messages


def main(folder=None) -> int:
    workspace = Path(folder) if folder else REPO_ROOT / WORKSPACE
    messages = sync(workspace=workspace)
    for line in messages:
        print(line)
    print(f"your work lives in {workspace} (nothing in the course overwrites it)"
          + ("" if messages else "; no new releases"))
    return 0
