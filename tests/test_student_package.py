"""The course where only PyTorch is (grader/student_package.py): the wheel, the setup cell every
chapter opens with, the links, and a machine that has torch, torchvision, matplotlib and tqdm and
nothing of the course: no repository, no nbgrader, no Jupyter server."""
import ast
import hashlib
import base64
import importlib.metadata as metadata
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from conftest import ALL_CHAPTERS
from grader import student_package as sp
from grader.course import REPO_ROOT, release_notebook, source_notebook

BARE_PACKAGES = ["torch", "torchvision", "matplotlib", "numpy", "tqdm"]   # what such a machine has
RUN_THERE = ["00_setup", "01_tensors"]     # run whole: the install, then every cell, on the CPU in quick mode


def test_the_wheel_holds_the_package_and_the_scripts_and_its_record_is_right(tmp_path):
    wheel = sp.build_wheel(tmp_path / "a")
    assert wheel.name == sp.wheel_name(sp.project_version())
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        record = archive.read(next(n for n in names if n.endswith("/RECORD"))).decode()
        for line in record.splitlines():
            name, digest, size = line.rsplit(",", 2)
            if digest:
                data = archive.read(name)
                assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert int(size) == len(data)
    tops = {n.split("/")[0] for n in names}
    assert tops == {"torchcourse", "ddp_scripts", f"torchcourse-{sp.project_version()}.dist-info"}, tops
    assert "torchcourse/distributed.py" in names and "ddp_scripts/toy_ddp.py" in names
    assert sp.build_wheel(tmp_path / "b").read_bytes() == wheel.read_bytes(), "the same sources, the same wheel"


@pytest.mark.parametrize("chapter", ALL_CHAPTERS)
def test_every_chapter_opens_with_the_configured_setup_cell(chapter):
    """Solutions and release alike, as pyproject.toml's [tool.torchcourse] says (make release writes it)."""
    settings = sp.read_settings()
    nb = nbformat.read(source_notebook(chapter), as_version=4)
    assert not sp.sync_notebook(nb, chapter, settings), f"run `make release`: {chapter} says other settings"
    released = nbformat.read(release_notebook(chapter), as_version=4)
    code = [c for c in released.cells if c.cell_type == "code"]
    assert code[0].source == sp.setup_cell_source(settings).rstrip("\n")
    assert (sp.LINKS_ID.format(chapter=chapter) in {c.get("id") for c in released.cells}) == bool(settings.repository)


def test_links_follow_the_repository_and_go_when_it_is_unset(tmp_path):
    nb = nbformat.read(source_notebook("03_neural_networks"), as_version=4)
    settings = sp.Settings(package_url="https://example.org/w.whl", repository="someone/course", branch="fall")
    assert sp.sync_notebook(nb, "03_neural_networks", settings)
    colab, kaggle = sp.links("03_neural_networks", settings)
    assert colab == ("https://colab.research.google.com/github/someone/course/blob/fall/"
                     "notebooks/03_neural_networks/03_neural_networks.ipynb")
    assert kaggle == ("https://www.kaggle.com/kernels/welcome?src=https://github.com/someone/course/blob/fall/"
                      "notebooks/03_neural_networks/03_neural_networks.ipynb")
    assert colab in nb.cells[1].source and '"https://example.org/w.whl"' in sp.setup_cell_source(settings)
    assert not sp.sync_notebook(nb, "03_neural_networks", settings), "a second sync changes nothing"
    assert sp.sync_notebook(nb, "03_neural_networks", sp.Settings())
    assert sp.LINKS_ID.format(chapter="03_neural_networks") not in {c.get("id") for c in nb.cells}
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n{sp.README_START}\nold\n{sp.README_END}\nafter\n")
    assert sp.sync_readme(["03_neural_networks"], settings, readme)
    assert colab in readme.read_text() and readme.read_text().endswith("after\n")
    assert (REPO_ROOT / "README.md").read_text().count(sp.readme_section(ALL_CHAPTERS, sp.read_settings())) == 1


def machine_env(**settings) -> dict:
    """This environment without what would lead a process to the course (PYTHONPATH, a venv's name)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return dict(env, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1", CUDA_VISIBLE_DEVICES="", **settings)


def closure(names: list) -> list:
    """The installed distributions `names` need, theirs included (markers evaluated here)."""
    seen, todo = {}, list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue                       # an optional one this platform does not install
        seen[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(seen.values())


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A fresh venv whose only packages are BARE_PACKAGES and what they need (linked from this
    environment, read-only: a course on Colab starts like this), and the course's wheel."""
    root = tmp_path_factory.mktemp("bare")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    shelf = root / "site"
    shelf.mkdir()
    for dist in closure(BARE_PACKAGES):
        for top in {Path(str(f)).parts[0] for f in dist.files or []} - {"..", "__pycache__"}:
            source = Path(dist.locate_file(top))
            if source.exists() and not (shelf / top).exists():
                (shelf / top).symlink_to(source)
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "bare-shelf.pth").write_text(f"{shelf}\n")
    wheel = sp.build_wheel(root / "wheels")
    return python, wheel, root


def test_the_bare_machine_has_torch_and_nothing_of_the_course(bare):
    python, _, root = bare
    found = subprocess.run([python, "-c", "import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None "
                            "for m in ['torch', 'torchvision', 'matplotlib', 'tqdm', 'torchcourse', 'grader', "
                            "'nbgrader', 'jupyter_server', 'nbclient']}))"],
                           capture_output=True, text=True, check=True, cwd=root, env=machine_env()).stdout
    assert json.loads(found) == {"torch": True, "torchvision": True, "matplotlib": True, "tqdm": True,
                                 "torchcourse": False, "grader": False, "nbgrader": False,
                                 "jupyter_server": False, "nbclient": False}


def test_everything_a_chapter_imports_is_there_once_the_wheel_is(bare, tmp_path):
    """Every module the chapters' cells import, and every module of torchcourse, imports on the bare
    machine with the wheel installed (the self-check's `grader` aside: its cell says what to do without)."""
    python, wheel, _ = bare
    target = tmp_path / "installed"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--target", str(target), str(wheel)],
                   check=True, env=machine_env())
    modules = {f"torchcourse.{p.stem}" for p in (REPO_ROOT / "torchcourse").glob("*.py") if p.stem != "__init__"}
    for chapter in ALL_CHAPTERS:
        for cell in nbformat.read(source_notebook(chapter), as_version=4).cells:
            if cell.cell_type != "code" or "check_notebook(" in cell.source:
                continue
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Import):
                    modules.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    modules.add(node.module)
    code = ("import importlib, json, sys\nbad = {}\nfor m in sys.argv[1:]:\n    try:\n        importlib.import_module(m)\n"
            "    except Exception as err:\n        bad[m] = repr(err)\nprint(json.dumps(bad))")
    out = subprocess.run([python, "-c", code, *sorted(modules)], capture_output=True, text=True, check=True,
                         cwd=tmp_path, env=dict(machine_env(), PYTHONPATH=str(target)))
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


@pytest.mark.parametrize("chapter", RUN_THERE)
def test_a_chapter_installs_the_course_and_runs_on_the_bare_machine(bare, chapter, tmp_path):
    """As a student on Colab runs it: the first code cell finds no torchcourse and installs the wheel
    from its URL (COURSE_PACKAGE, here a file URL), then every cell runs (in quick mode, on the CPU),
    every visible test passing; the self-check cell says it needs the repository."""
    python, wheel, root = bare
    runner = tmp_path / "runner"
    runner.mkdir()
    shutil.copy(REPO_ROOT / "grader" / "headless.py", runner / "headless.py")
    work = tmp_path / chapter
    shutil.copytree(source_notebook(chapter).parent, work)
    env = machine_env(COURSE_PACKAGE=wheel.as_uri(), COURSE_QUICK="1", COURSE_OFFLINE="1", MPLBACKEND="Agg")
    try:
        done = subprocess.run([python, runner / "headless.py", "--keep-going", work / f"{chapter}.ipynb"],
                              capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
        beside = subprocess.run([python, "-c", "import torchcourse.distributed as d; print(d.SCRIPTS_DIR.joinpath('toy_ddp.py').exists())"],
                                capture_output=True, text=True, cwd=tmp_path, env=env).stdout.strip()
    finally:   # the next chapter starts from the bare machine again
        subprocess.run([python, "-m", "pip", "uninstall", "--quiet", "-y", "torchcourse"], env=env, check=True)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    assert "torchcourse is not installed here: installing file://" in log and "FAILED" not in log, log[-4000:]
    check_cell = next(c.source for c in nbformat.read(work / f"{chapter}.ipynb", as_version=4).cells
                      if "check_notebook(" in c.source)     # skipped by the runner, as by nbval
    said = subprocess.run([python, "-c", check_cell], capture_output=True, text=True, cwd=work, env=env)
    assert said.returncode == 0 and "The self-check needs the course's repository" in said.stdout, said
    assert beside == "True", "chapter 10's DDP scripts sit where torchcourse.distributed launches them from"
