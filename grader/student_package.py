"""The course where only PyTorch is: Colab, Kaggle, a cloud VM with torch and nothing else.

Students there have none of the repository: no `make setup`, no `torchcourse`. So:

- `build_wheel` packs `torchcourse/` and `ddp_scripts/` into one wheel (no dependencies: torch,
  torchvision and matplotlib are what those machines already have). `make student-bundle` puts it in
  the bundle's wheels/ folder; the instructor publishes it at `package_url`.
- Every chapter opens with a setup cell (`setup_cell_source`) that installs that wheel when
  `torchcourse` is missing, and does nothing where it is installed (`make lab`, the grader). The
  environment variable COURSE_PACKAGE overrides the URL (a local wheel, a mirror).
- With `repository` set, every chapter gets "Open in Colab" and "Open in Kaggle" links to its
  release on GitHub (`links_markdown`), and the README lists them all.

The instructor sets both in one place, pyproject.toml's [tool.torchcourse] table; `grader release`
writes them into the solutions (`sync_solutions`) before releasing, and tests/test_student_package.py
fails while a notebook or the README says something else.
"""
import base64
import hashlib
import io
import json
import re
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader.course import REPO_ROOT, SOURCE

PACKAGE = "torchcourse"
SCRIPTS = "ddp_scripts"            # beside torchcourse in site-packages, where torchcourse.distributed looks
SETUP_ID = "{chapter}-course-package"
LINKS_ID = "{chapter}-open-elsewhere"
README_START, README_END = "<!-- open-elsewhere -->", "<!-- /open-elsewhere -->"


@dataclass(frozen=True)
class Settings:
    package_url: str = ""          # where the setup cell fetches the wheel
    repository: str = ""           # "owner/name" on GitHub: the links open notebooks/ there
    branch: str = "main"


def read_settings(pyproject: Path = REPO_ROOT / "pyproject.toml") -> Settings:
    table = tomllib.loads(Path(pyproject).read_text()).get("tool", {}).get(PACKAGE, {})
    unknown = set(table) - set(Settings.__dataclass_fields__)
    if unknown:
        raise ValueError(f"{pyproject}: [tool.{PACKAGE}] does not know {', '.join(sorted(unknown))}")
    return Settings(**table)


def project_version(pyproject: Path = REPO_ROOT / "pyproject.toml") -> str:
    return tomllib.loads(Path(pyproject).read_text())["project"]["version"]


def wheel_name(version: str) -> str:
    return f"{PACKAGE}-{version}-py3-none-any.whl"


def build_wheel(out_dir: Path, root: Path = REPO_ROOT) -> Path:
    """The wheel of torchcourse and ddp_scripts, written to out_dir; its path. Built as the wheel
    format says (a zip with a .dist-info holding METADATA, WHEEL and RECORD), with no build tool,
    no network, and the same bytes for the same sources."""
    version = project_version(root / "pyproject.toml")
    info = f"{PACKAGE}-{version}.dist-info"
    files = {}
    for folder in (PACKAGE, SCRIPTS):
        for path in sorted((root / folder).rglob("*.py")):
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    files[f"{info}/METADATA"] = (f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {version}\n"
                                 "Summary: The course package of the hands-on PyTorch course\n"
                                 "Requires-Python: >=3.10\n").encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: grader.student_package\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    wheel = out_dir / wheel_name(version)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data)
    wheel.write_bytes(buffer.getvalue())
    return wheel


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def setup_cell_source(settings: Settings) -> str:
    url = settings.package_url or ""
    return f'''# Where only PyTorch is installed (Colab, Kaggle, a bare VM), this installs the course's package first;
# where it is installed (make lab, the grader) it does nothing.
import importlib.util
import os
import subprocess
import sys

COURSE_PACKAGE = os.environ.get("COURSE_PACKAGE", {json.dumps(url)})
if importlib.util.find_spec("torchcourse") is None:
    if not COURSE_PACKAGE:
        raise RuntimeError("torchcourse is not installed and the course names no package to install: "
                           "ask your instructor for its URL and set COURSE_PACKAGE, or use make setup")
    print(f"torchcourse is not installed here: installing {{COURSE_PACKAGE}}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", COURSE_PACKAGE], check=True)
    importlib.invalidate_caches()
    print("installed")
'''


def release_path(chapter: str) -> str:
    return f"notebooks/{chapter}/{chapter}.ipynb"


def links(chapter: str, settings: Settings) -> tuple:
    """(Colab URL, Kaggle URL) of the chapter's release on GitHub, or () without a repository."""
    if not settings.repository:
        return ()
    blob = f"github.com/{settings.repository}/blob/{settings.branch}/{release_path(chapter)}"
    return (f"https://colab.research.google.com/{blob.replace('github.com/', 'github/', 1)}",
            f"https://www.kaggle.com/kernels/welcome?src=https://{blob}")


def links_markdown(chapter: str, settings: Settings) -> str | None:
    found = links(chapter, settings)
    if not found:
        return None
    colab, kaggle = found
    return (f"[Open in Colab]({colab}) · [Open in Kaggle]({kaggle}): a free GPU in the browser. The first "
            "code cell installs the course's package there; hand the notebook in through your class's hub.")


def sync_notebook(nb, chapter: str, settings: Settings) -> bool:
    """Put the setup cell before the first code cell and the links after the title (removed when no
    repository is set), as `settings` say. True when the notebook changed."""
    before = nbformat.writes(nb)
    setup_id, links_id = SETUP_ID.format(chapter=chapter), LINKS_ID.format(chapter=chapter)
    nb.cells = [c for c in nb.cells if c.get("id") not in (setup_id, links_id)]
    first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    setup = nbformat.v4.new_code_cell(setup_cell_source(settings).rstrip("\n"))
    setup.id = setup_id
    nb.cells.insert(first_code, setup)
    text = links_markdown(chapter, settings)
    if text:
        cell = nbformat.v4.new_markdown_cell(text)
        cell.id = links_id
        nb.cells.insert(1, cell)
    return nbformat.writes(nb) != before


def sync_solutions(settings: Settings | None = None, source: Path = SOURCE, chapters=None) -> list:
    """Write the settings into every chapter's solution notebook; the chapters that changed."""
    settings = settings or read_settings()
    changed = []
    for folder in sorted(p for p in Path(source).iterdir() if (p / f"{p.name}.ipynb").exists()):
        if chapters and folder.name not in chapters:
            continue
        path = folder / f"{folder.name}.ipynb"
        nb = nbformat.read(path, as_version=4)
        if sync_notebook(nb, folder.name, settings):
            nbformat.write(nb, path)
            changed.append(folder.name)
    return changed


def readme_section(chapters: list, settings: Settings) -> str:
    if not settings.repository:
        body = ("No repository is set yet, so there are no links: an instructor sets `repository` (and\n"
                "`package_url`) in pyproject.toml's `[tool.torchcourse]` table and runs `make release`.")
    else:
        rows = ["| chapter | Colab | Kaggle |", "|---|---|---|"]
        rows += [f"| {ch} | [open]({links(ch, settings)[0]}) | [open]({links(ch, settings)[1]}) |" for ch in chapters]
        body = "\n".join(rows)
    return f"{README_START}\n{body}\n{README_END}"


def sync_readme(chapters: list, settings: Settings, readme: Path = REPO_ROOT / "README.md") -> bool:
    text = readme.read_text()
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{readme} has no {README_START} ... {README_END} section")
    new = pattern.sub(lambda _: readme_section(chapters, settings), text)
    if new != text:
        readme.write_text(new)
    return new != text
