"""`make hub`: set up (or update) a class's JupyterHub on this server from the roster, then start it.

Each step can run again: people added to the roster get their user, removed people lose access to
the hub (never their files), the environment is rebuilt only when the lock changes, and chapters
are released only when the exchange has none. Where each thing lives: grader/hub/layout.py.
Design and what is tested: docs/GRADING.md, "A class on one server".
"""
import compileall
import dataclasses
import grp
import hashlib
import json
import os
import platform
import pwd
import shutil
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path
from urllib.parse import urlsplit

from grader.course import COURSE_ID, REPO_ROOT, SOURCE, chapters
from grader.hub import busy_activity, disk, home_disks, limits, memory_note, port_owner, private_mounts, unix_users
from grader.hub.layout import HubLayout
from grader.hub.roster import read_roster
from grader.inbound import QUARANTINE
from grader.lab_settings import install_overrides

DEFAULT_URL = "http://127.0.0.1:8000"
SYSTEM_PYTHON = "/usr/bin/python3"   # every user can run it (a pyenv or conda Python under /root: not)
PROXY = REPO_ROOT / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
# What the students' Python may import: the course's packages and what they read, never solutions/.
CODE = ["grader", "torchcourse", "ddp_scripts", "pyproject.toml", "nbgrader_config.py"]
# nbgrader's instructor tools, hidden from students (they would find no course directory anyway).
INSTRUCTOR_SERVER_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]
# The formgrader only works on a course directory under the JupyterLab's root (the instructor's home),
# and reads nbgrader_config.py from the home, not from the course directory: each instructor gets a
# link to the course directory and a config that loads the course's own (its grading pipeline).
COURSE_LINK = "course-directory"
# Server extensions nobody's server loads: jupyter_lsp (installed with JupyterLab) looks for language
# servers at each start and the course installs none; off, a server starts in 1.55 CPU-s, not 1.84
# (3 starts each, alternated, 2026-11-30).
UNUSED_SERVER_EXTENSIONS = {"jupyter_lsp": False}
INSTRUCTOR_LAB_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                          "@jupyter/nbgrader:create-assignment"]
# Each person's kernels talk to their server over Unix sockets in the person's runtime folder (mode 700),
# not over TCP ports on 127.0.0.1: there any user of the machine could subscribe to a classmate's iopub
# channel, which carries every cell run (the code itself) and every output, or take a port first.
KERNEL_TRANSPORT = {"KernelManager": {"transport": "ipc"}}
# A Unix socket's path holds at most 107 bytes, and a kernel's is <runtime folder>/kernel-<uuid>-ipc-<n>:
# in jupyter's default runtime folder (~/.local/share/jupyter/runtime) a user name of more than 22
# characters would not fit. This one fits the longest (32) in /home; hub_config.py sets it per person.
RUNTIME_FOLDER = ".jupyter/runtime"
IPC_PATH_MAX = 107


def runtime_folder(home) -> Path:
    """Where a person's server keeps its kernels' connection files and sockets (JUPYTER_RUNTIME_DIR)."""
    return Path(home) / RUNTIME_FOLDER


class HubError(RuntimeError):
    """`make hub` cannot go on here; the message says why and what to do."""


def check_platform() -> None:
    if platform.system() != "Linux":
        raise HubError("make hub sets up Unix users and runs JupyterHub's local spawner: it needs Linux "
                       f"(this is {platform.system()}); for one person on this machine, use `make lab`")
    if os.geteuid() != 0:
        raise HubError("make hub creates Unix users and starts each person's JupyterLab as that user: "
                       "run it as root (sudo make hub)")
    if not PROXY.exists():
        raise HubError(f"JupyterHub's proxy is missing ({PROXY}): `make hub` installs it with npm "
                       "(install Node.js and npm: apt-get install -y nodejs npm)")
    if not Path(SYSTEM_PYTHON).exists():
        raise HubError(f"{SYSTEM_PYTHON} is missing: the students' environment is made from the "
                       "system's Python (apt-get install -y python3 python3-venv)")


def _write(path: Path, text: str, owner: str | None = None, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, mode)
    if owner:
        entry = pwd.getpwnam(owner)
        for p in (path.parent, path):
            os.chown(p, entry.pw_uid, entry.pw_gid)


# ---- people -------------------------------------------------------------------------------------

def create_users(people, layout: HubLayout) -> list:
    """Users, homes and groups for the roster; new users' initial passwords appended to a root-only
    file. Returns the names of the users created now."""
    unix_users.ensure_group(unix_users.INSTRUCTORS)
    unix_users.ensure_group(unix_users.STUDENTS)
    created = []
    for person in people:
        password = unix_users.ensure_user(person.name, person.instructor)
        if password:
            created.append(person.name)
            with open(layout.passwords, "a") as f:
                f.write(f"{person.name} {password}\n")
            os.chmod(layout.passwords, 0o600)
    return created


def mount_home_disks(people, layout: HubLayout, size: int) -> None:
    """Each person's home on a filesystem of `size` bytes (grader/hub/home_disks.py), before their
    settings are written into it; nothing when `size` is 0."""
    if not size:
        return
    images = layout.state / home_disks.FOLDER
    try:
        home_disks.check_room([p.name for p in people], size, images)
        mounted = [p.name for p in people if home_disks.ensure(p.name, size, images)]
    except (home_disks.HomeDiskError, subprocess.CalledProcessError, OSError) as err:
        raise HubError(f"the homes' own disks: {err}") from None
    print(f"make hub: each home holds at most {size / (1 << 20):.0f} MiB"
          + (f" ({len(mounted)} mounted now)" if mounted else ""))


def configure_homes(people, layout: HubLayout) -> None:
    """Each person's Jupyter settings: an instructor's formgrader finds the course directory and may
    be shown in JupyterLab's frame; a student's lab shows the Assignments tab only."""
    for person in people:
        home = Path(pwd.getpwnam(person.name).pw_dir)
        socket_path = runtime_folder(home) / f"kernel-{'0' * 36}-ipc-9"
        if len(str(socket_path).encode()) > IPC_PATH_MAX:
            raise HubError(f"{person.name}'s home {home} is too long a path for their kernels' Unix sockets "
                           f"({socket_path}: {len(str(socket_path).encode())} bytes, at most {IPC_PATH_MAX})")
        link = home / COURSE_LINK
        if person.instructor:
            if not link.is_symlink():
                link.symlink_to(layout.course)
                os.lchown(link, pwd.getpwnam(person.name).pw_uid, -1)
            nbgrader = ("c = get_config()  # noqa: F821\n"
                        f"load_subconfig({str(layout.course / 'nbgrader_config.py')!r})  # noqa: F821\n"
                        f"c.CourseDirectory.root = {str(link)!r}\n")
            # JupyterHub's single-user servers forbid all framing (CVE-2024-28233); the formgrader is a
            # frame of the instructor's own JupyterLab, so their server allows its own origin only.
            server = ("c = get_config()  # noqa: F821\n"
                      "c.ServerApp.tornado_settings = {'headers': "
                      "{'Content-Security-Policy': \"frame-ancestors 'self'\"}}\n")
            extensions, plugins = {}, {}
        else:
            if link.is_symlink():   # an instructor who became a student
                link.unlink()
            nbgrader = server = "c = get_config()  # noqa: F821\n"
            extensions = {name: False for name in INSTRUCTOR_SERVER_EXTENSIONS}
            plugins = {name: True for name in INSTRUCTOR_LAB_PLUGINS}
        extensions.update(UNUSED_SERVER_EXTENSIONS)
        settings = home / ".jupyter"
        _write(settings / "nbgrader_config.py", nbgrader, person.name)
        _write(settings / "jupyter_server_config.py", server, person.name)
        _write(settings / "jupyter_server_config.json",
               json.dumps({"ServerApp": {"jpserver_extensions": extensions}}, indent=1), person.name)
        _write(settings / "labconfig" / "page_config.json",
               json.dumps({"disabledExtensions": plugins}, indent=1), person.name)


# ---- the students' environment ------------------------------------------------------------------

def copy_code(layout: HubLayout) -> None:
    """The course's packages, readable by everyone, replaced on every run (nobody edits them there)."""
    for name in CODE:
        src, dst = REPO_ROOT / name, layout.code / name
        if dst.is_dir():
            shutil.rmtree(dst)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dst)
    data = layout.code / "data"
    if (REPO_ROOT / "data").is_dir() and not data.exists():
        subprocess.run(["cp", "-al", str(REPO_ROOT / "data"), str(data)], check=True)   # links: no copy
    compileall.compile_dir(layout.code, quiet=1)   # nobody but root can write __pycache__ there
    subprocess.run(["chmod", "-R", "a+rX", str(layout.code)], check=True)


def _lock_digest() -> str:
    return hashlib.sha256((REPO_ROOT / "requirements.lock").read_bytes()).hexdigest()


def _ask(python: Path, code: str) -> str:
    return subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip()


def link_bytecode(source: Path, target: Path) -> int:
    """Hard-link each __pycache__ file of `source` (site-packages) into the same folder of `target`,
    where that package exists. The sources are links to the same files (uv's cache), so the
    bytecode's recorded mtime and size match them (where they do not, Python compiles in memory:
    slower imports, same result). Returns how many files were linked."""
    linked = 0
    for folder, _, files in os.walk(source):
        if Path(folder).name != "__pycache__":
            continue
        into = target / Path(folder).relative_to(source)
        if not into.parent.is_dir():
            continue
        into.mkdir(exist_ok=True)
        for name in files:
            try:
                os.link(Path(folder) / name, into / name)
                linked += 1
            except FileExistsError:
                pass
    return linked


def build_environment(layout: HubLayout) -> None:
    """A venv from the system's Python with the course's lock, the course's packages (editable, from
    code/) and the settings every JupyterLab on this hub shares. Rebuilt only when the lock changed."""
    stamp = layout.env / ".lock-sha256"
    if not (layout.python.exists() and stamp.exists() and stamp.read_text() == _lock_digest()):
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--clear", str(layout.env)], check=True)
        packages = Path(_ask(layout.python, "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
        # Same lock, same Python minor version: the course's .venv already holds the bytecode of every
        # package (and nobody but root could write it here); link it instead of compiling it again.
        same = _ask(layout.python, "import sys; print(sys.version_info[:2])") == str(sys.version_info[:2])
        subprocess.run([str(layout.python), "-m", "grader.install", *([] if not same else ["--no-compile"]),
                        "-r", str(REPO_ROOT / "requirements.lock")], check=True, cwd=REPO_ROOT)
        if same:
            link_bytecode(Path(sysconfig.get_paths()["purelib"]), packages)
        stamp.write_text(_lock_digest())
    subprocess.run([str(layout.python), "-m", "grader.install", "-e", str(layout.code)], check=True,
                   cwd=REPO_ROOT)
    etc = layout.env / "etc" / "jupyter"
    _write(etc / "nbgrader_config.py",
           "# Written by make hub: every person's view of the class's exchange.\n"
           "c = get_config()  # noqa: F821\n"
           f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
           f"c.Exchange.root = {str(layout.exchange)!r}\n"
           "c.Exchange.path_includes_course = True   # Fetch -> ~/<course id>/<assignment>/\n")
    install_overrides(layout.env)   # the same JupyterLab defaults as make lab's
    # every kernel of this environment: a restart after the OOM killer is said in words (memory_note.py)
    _write(layout.env / "etc" / "ipython" / "startup" / "00-memory-note.py", memory_note.STARTUP_FILE)
    # every server: a kernel running a cell counts as use for the idle culler (busy_activity.py)
    _write(etc / "jupyter_server_config.d" / "course-busy-activity.json", json.dumps(busy_activity.CONFIG, indent=1))
    # (a server reads jupyter_server_config.d/ for its extensions only: other settings go here)
    _write(etc / "jupyter_server_config.json", json.dumps(KERNEL_TRANSPORT, indent=1))
    subprocess.run(["chmod", "-R", "a+rX", str(layout.env)], check=True)


# ---- the course directory -----------------------------------------------------------------------

def prepare_course(layout: HubLayout) -> None:
    """The course directory: the course's settings pointed at the hub's exchange, and each chapter's
    source copied in once (an instructor's edits there are never overwritten)."""
    _write(layout.course / "nbgrader_config.py",
           "# Written by make hub: the course's nbgrader settings, in this course directory and the hub's exchange.\n"
           "c = get_config()  # noqa: F821\n"
           "import os\n"
           f"load_subconfig({str(layout.code / 'nbgrader_config.py')!r})  # noqa: F821\n"
           "# the folder of this file: a copy of it (a grading batch's scratch course, a regrade's) names its own\n"
           "c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))\n"
           f"c.Exchange.root = {str(layout.exchange)!r}\n"
           "c.CourseDirectory.groupshared = True   # several instructors: what one writes, all can change\n"
           "c.CourseGate.enrolled_only = True   # hand-ins of the roster's students only (enrol() puts them in the gradebook)\n",
           mode=0o640)
    for chapter in chapters(REPO_ROOT):
        dst = layout.course / SOURCE / chapter
        if not dst.exists():
            shutil.copytree(REPO_ROOT / SOURCE / chapter, dst,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    open_to_instructors(layout.course)


def open_to_instructors(path: Path) -> None:
    """Everything in the course directory: root's and the instructors' group's, nobody else's."""
    subprocess.run(["chgrp", "-R", unix_users.INSTRUCTORS, str(path)], check=True)
    subprocess.run(["chmod", "-R", "g+rwX,o-rwx", str(path)], check=True)


def prepare_exchange(layout: HubLayout) -> None:
    """The course's folder in the exchange, the instructors' group's (setgid): with nbgrader's
    `groupshared`, inbound, outbound and feedback are then theirs to read and write, and students
    keep nbgrader's rights (list and read outbound, write but not list inbound)."""
    gid = grp.getgrnam(unix_users.INSTRUCTORS).gr_gid
    folder = layout.exchange / COURSE_ID
    folder.mkdir(exist_ok=True)
    for path in [folder, *(folder / name for name in ("inbound", "outbound", "feedback"))]:
        if path.is_dir():
            os.chown(path, 0, gid)
            os.chmod(path, os.stat(path).st_mode | stat.S_ISGID | stat.S_IRWXG)
    # what the course's gate refuses (grader/inbound.py): the instructors' to read, nobody else's
    quarantine = folder / QUARANTINE
    quarantine.mkdir(exist_ok=True)
    os.chown(quarantine, 0, gid)
    os.chmod(quarantine, 0o2770)


def close_repository() -> None:
    """The course's checkout holds solutions/ and the tests' answers: on a server where students
    run code, nobody but its owner and group may enter it (the hub reads only copies)."""
    mode = REPO_ROOT.stat().st_mode
    if mode & 0o007:
        os.chmod(REPO_ROOT, mode & ~0o007)
        print(f"make hub: {REPO_ROOT} closed to other users (it holds the solutions)")


def released(layout: HubLayout) -> list:
    outbound = layout.exchange / COURSE_ID / "outbound"
    return sorted(p.name for p in outbound.iterdir()) if outbound.is_dir() else []


def release_all(layout: HubLayout, chapters=None) -> list:
    """Release the chapters (default: every one) to the hub's exchange, as `make release` does for
    one machine."""
    from grader.release import release
    old = os.umask(0o007)   # what nbgrader writes in the course directory stays the instructors'
    try:
        names = release(chapters, course=layout.course, local_exchange=False)
    finally:
        os.umask(old)
    open_to_instructors(layout.course)
    prepare_exchange(layout)
    return names


# ---- the hub ------------------------------------------------------------------------------------

def enrol(people, layout: HubLayout) -> None:
    """The roster's students in the gradebook, so the formgrader lists those who have not submitted
    (nobody is removed: a grade outlives a roster line)."""
    from nbgrader.api import Gradebook
    old = os.umask(0o007)
    try:
        with Gradebook(f"sqlite:///{layout.course / 'gradebook.db'}") as gradebook:
            for person in people:
                if not person.instructor:
                    gradebook.update_or_create_student(person.name)
    finally:
        os.umask(old)


def check_limits(roster: Path) -> tuple:
    """(the settings beside the roster, whether cgroups hold each person's limits). Stops `make hub`
    where cgroups cannot be used, unless HUB_LIMITS=off says to start without them."""
    try:
        settings = limits.read_settings(roster)
    except limits.LimitsError as err:
        raise HubError(str(err)) from None
    off = os.environ.get("HUB_LIMITS", "on").strip().lower() in ("off", "0", "no", "false")
    if off:
        print("make hub: HUB_LIMITS=off: no memory, CPU or process limits; one person can slow or stop the class")
        return settings, False
    why = limits.problem()
    if why:
        raise HubError(f"per-person limits (memory, CPU, processes) need cgroups, and here {why}. "
                       "Fix that, or start the hub without limits: make hub HUB_LIMITS=off")
    print(f"make hub: {settings.describe()} (settings: {limits.settings_path(roster)})")
    return settings, True


def write_hub_config(layout: HubLayout, people, url: str, settings=None, cgroups: bool = True) -> None:
    names = sorted(p.name for p in people)
    instructors = sorted(p.name for p in people if p.instructor)
    values = dataclasses.asdict(settings or limits.Settings())
    _write(layout.config,
           "# Written by make hub from the roster: edit the roster and run make hub again.\n"
           "from pathlib import Path\n"
           "from grader.hub.hub_config import configure\n"
           f"configure(get_config(), Path({str(layout.root)!r}), {url!r}, {str(PROXY)!r}, {names!r},  # noqa: F821\n"
           f"          instructors={instructors!r}, limits={values!r}, cgroups={cgroups!r})\n",
           mode=0o600)


SOCKET_PATH_MAX = 107   # bytes of a Unix socket's path (sun_path, less its NUL)


def check_root(layout: HubLayout) -> None:
    """Each person's server has its own /tmp, /var/tmp, /run/lock and /dev/shm (grader/hub/private_mounts.py),
    where folders of the hub's under them would not be."""
    for private in private_mounts.FOLDERS:
        if layout.root.is_relative_to(private):
            raise HubError(f"HUB_ROOT {layout.root} is under {private}, which each person's server replaces "
                           "with its own: choose a folder elsewhere (the default is /srv/pytorch-course)")


def check_socket_paths(layout: HubLayout) -> None:
    """The hub's sockets must fit in a socket address; say so before anything is made."""
    longest = max((layout.hub_socket, layout.proxy_api_socket), key=lambda path: len(os.fsencode(path)))
    if len(os.fsencode(longest)) > SOCKET_PATH_MAX:
        raise HubError(f"HUB_ROOT is too long: the hub's socket {longest} would be over {SOCKET_PATH_MAX} "
                       "bytes, the most a Unix socket's path may have. Choose a shorter HUB_ROOT.")


def warn_unless_privileged(port: int) -> None:
    """The people's port is the one address a student could take while the hub is down (its login
    page would then be theirs): below ip_unprivileged_port_start only root can bind it."""
    first = port_owner.first_unprivileged_port()
    if port >= first:
        print(f"make hub: note: port {port} can be bound by any user of this server while the hub is stopped; "
              f"a port below {first} (or a proxy in front, such as nginx on 443) cannot", file=sys.stderr)


def setup(roster: Path, root: Path, url: str = DEFAULT_URL, chapters=None) -> HubLayout:
    """Everything `make hub` does before starting JupyterHub; `chapters`: those to release the first
    time (default: every one). Returns the layout."""
    check_platform()
    people = read_roster(roster)
    settings, cgroups = check_limits(roster)
    close_repository()
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.port:
        raise HubError(f"HUB_URL must look like http://127.0.0.1:8000, not {url!r}")
    layout = HubLayout(Path(root).resolve())
    check_root(layout)
    check_socket_paths(layout)
    warn_unless_privileged(parts.port)
    unix_users.ensure_group(unix_users.INSTRUCTORS)
    layout.make_folders(unix_users.INSTRUCTORS)
    created = create_users(people, layout)
    mount_home_disks(people, layout, settings.home_disk)
    copy_code(layout)
    build_environment(layout)
    configure_homes(people, layout)
    prepare_course(layout)
    prepare_exchange(layout)
    written_by_students = {"the exchange": layout.exchange}
    if not settings.home_disk:   # else each home is a filesystem of its own
        written_by_students["the people's homes"] = Path("/home")
    for problem in disk.unguarded({"the hub's state": layout.state, "the course and its gradebook": layout.course},
                                  written_by_students):
        print(f"make hub: warning: {problem}", file=sys.stderr)
    if not released(layout):
        release_all(layout, chapters)
    enrol(people, layout)
    write_hub_config(layout, people, url, settings, cgroups)
    print(f"make hub: {len(people)} people on the roster, {len(created)} new users "
          f"(initial passwords in {layout.passwords}, readable by root only)")
    return layout


def start(layout: HubLayout) -> subprocess.Popen:
    """JupyterHub, as root, in the state folder; its log goes to state/jupyterhub.log."""
    log = open(layout.log, "a")
    return subprocess.Popen([str(layout.env / "bin" / "jupyterhub"), "-f", str(layout.config)],
                            cwd=layout.state, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env=dict(os.environ, PATH=layout.path))
