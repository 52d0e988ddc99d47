"""Building course copies and student submissions, for the tests and the grading benchmark (tests/bench_grading.py)."""
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from grader.course import (COURSE_ID, EXCHANGE, REPO_ROOT, release_notebook, source_notebook,
                           tool_env)

# What a course copy leaves behind: environments, VCS data, instructor state.
_SKIP = shutil.ignore_patterns(".venv", ".git", "__pycache__", ".pytest_cache", "gradebook.db*",
                               "submitted", "autograded", "feedback", "data", "bundle", "*.egg-info")


def copy_course(dest: Path, source: Path = REPO_ROOT) -> Path:
    """A disposable copy of the course directory (its own gradebook, no submissions)."""
    dest = Path(dest)
    shutil.copytree(source, dest, ignore=_SKIP)
    return dest


def submission_path(course: Path, student: str, assignment: str) -> Path:
    return Path(course) / "submitted" / student / assignment / f"{assignment}.ipynb"


def place_submission(course: Path, student: str, assignment: str, nb) -> Path:
    """Put a notebook (NotebookNode, or a path to copy) where nbgrader expects a hand-in."""
    path = submission_path(course, student, assignment)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, (str, Path)):
        shutil.copyfile(nb, path)
    else:
        nbformat.write(nb, path)
    return path


def solution_cell_ids(nb) -> list:
    return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("solution")]


def grade_cell_ids(nb) -> list:
    return [c.metadata["nbgrader"]["grade_id"] for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade")]


def with_answers(nb, answers: dict):
    """A copy of `nb` whose solution cells named in `answers` hold that source instead."""
    nb = nbformat.from_dict(nb)
    unknown = set(answers) - set(solution_cell_ids(nb))
    if unknown:
        raise KeyError(f"no solution cells named {sorted(unknown)}")
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in answers and cell.metadata["nbgrader"].get("solution"):
            cell.source = answers[grade_id]
    return nb


def release_copy(assignment: str, course: Path):
    """The untouched student notebook, as a student would hand it in."""
    return nbformat.read(release_notebook(assignment, course), as_version=4)


def solution_copy(assignment: str, course: Path):
    return nbformat.read(source_notebook(assignment, course), as_version=4)


class ExchangeStudent:
    """A student on nbgrader's exchange, as on the hub: a folder of their own, their own nbgrader cache
    (which `submit` writes and `fetch_feedback` reads), and their id given as the student id (nbgrader 0.9
    takes the Unix user name otherwise, or JUPYTERHUB_USER when that name is jovyan)."""

    def __init__(self, course: Path, name: str, home: Path):
        self.course, self.name, self.home = Path(course), name, Path(home)
        self.home.mkdir(parents=True, exist_ok=True)

    def place(self, assignment: str, notebooks: dict) -> None:
        """Put {file name: NotebookNode or bytes} in the student's folder of `assignment`, as their editor would."""
        folder = self.home / assignment
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for name, nb in notebooks.items():
            if isinstance(nb, bytes):
                (folder / name).write_bytes(nb)
            else:
                nbformat.write(nb, folder / name)

    def submit(self, assignment: str, notebooks: dict) -> str:
        """Hand in {file name: NotebookNode or bytes} as `assignment`, as the Assignments tab's Submit
        does (nbgrader's exchange, in this process); return the submission's timestamp."""
        self.place(assignment, notebooks)
        run_exchange("Submit", self.exchange_config(assignment))
        return self.last_submission(assignment).name.split("+")[2]

    def cache(self) -> Path:
        return self.home / ".jupyter-data" / "nbgrader_cache"

    def exchange_config(self, assignment: str):
        """nbgrader's configuration of one exchange action of this student's on `assignment`."""
        from traitlets.config import Config
        config = Config()
        config.CourseDirectory.course_id, config.CourseDirectory.student_id = COURSE_ID, self.name
        config.CourseDirectory.assignment_id = assignment
        config.Exchange.root, config.Exchange.assignment_dir = str(self.course / EXCHANGE), str(self.home)
        config.Exchange.cache = str(self.cache())
        return config

    def has_submitted(self, assignment: str) -> bool:
        return any((self.cache() / COURSE_ID).glob(f"*+{assignment}+*"))

    def last_submission(self, assignment: str) -> Path:
        """The newest submission in the student's cache (the folder Fetch Feedback reads)."""
        return sorted((self.cache() / COURSE_ID).glob(f"*+{assignment}+*"))[-1]

    def released_feedback(self, assignment: str, notebook: str) -> Path:
        """Where release_feedback puts the feedback on the newest submission's `notebook`, as fetch_feedback
        finds it (a hash of the submission's secret and the notebook's name)."""
        from nbgrader.utils import notebook_hash
        secret = (self.last_submission(assignment) / "submission_secret.txt").read_text()
        name = notebook_hash(secret=secret, notebook_id=notebook)
        return self.course / EXCHANGE / COURSE_ID / "feedback" / f"{name}.html"

    def fetch_feedback(self, assignment: str) -> dict:
        """Fetch Feedback (nbgrader's exchange, in this process), then {timestamp: {notebook file name: HTML}}
        of what the student has."""
        run_exchange("FetchFeedback", self.exchange_config(assignment))
        return {folder.name: {page.name: page.read_text() for page in folder.glob("*.html")}
                for folder in sorted((self.home / assignment / "feedback").glob("*"))}


def run_exchange(action: str, config) -> None:
    """An exchange action ("Submit", "FetchFeedback") as nbgrader's lab extension runs it: in the
    process, no `nbgrader` command (server_extensions/assignment_list: ExchangeFactory(config).Submit(...))."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange import ExchangeFactory
    getattr(ExchangeFactory(config=config), action)(coursedir=CourseDirectory(config=config),
                                                    authenticator=Authenticator(config=config), config=config).start()


def serve_submits(course: str, student: str, home: str) -> None:
    """A student's running server, as far as Submit goes (StudentServer's process): nbgrader imported
    once, then one Submit per assignment named on stdin."""
    import traceback
    import nbgrader.auth, nbgrader.coursedir, nbgrader.exchange, traitlets.config  # noqa: E401, F401 (imported now, as a server has)
    me = ExchangeStudent(Path(course), student, Path(home))
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            run_exchange("Submit", me.exchange_config(line.strip()))
            print("submitted", flush=True)
        except BaseException:
            print("failed " + repr(traceback.format_exc()), flush=True)


class StudentServer:
    """The Submit button of `student`'s running server (serve_submits): started, nbgrader imported,
    before the moment it is used, as a class's servers are before a deadline."""

    def __init__(self, student: ExchangeStudent):
        self.student = student
        self.proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                                      "from submissions import serve_submits; serve_submits(*sys.argv[2:])",
                                      str(Path(__file__).parent), str(student.course), student.name, str(student.home)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=tool_env(), cwd=student.home)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"{student.name}'s submitting process did not start")

    def submit(self, assignment: str, notebooks: dict) -> None:
        self.student.place(assignment, notebooks)
        self.proc.stdin.write(assignment + "\n")
        self.proc.stdin.flush()
        said = self.proc.stdout.readline().strip()
        if said != "submitted":
            raise RuntimeError(f"Submit as {self.student.name} failed: {said}")

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
