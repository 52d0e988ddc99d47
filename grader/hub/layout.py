"""Where a class's hub keeps everything, under one folder (HUB_ROOT, default /srv/pytorch-course),
and who may read what. Permissions are the point: students run code as themselves on this server.

    env/       the Python every JupyterLab runs (readable by all: a venv made from the system's Python)
    code/      the course's packages the notebooks import, no solutions (readable by all)
    exchange/  nbgrader's shared exchange (1777; nbgrader makes inbound write-only for students)
    course/    the course directory: solutions, gradebook, submissions (root and instructors only)
    state/     the hub's database, cookie secret, config, initial passwords, log (root only)
    sockets/   the hub's API socket, which everyone's server connects to (the folder root's: only root
               can put a socket there); sockets/private/ the proxy's API (root only)

The hub and its proxy's API listen on these Unix sockets, not on a TCP port: any process on the
server can bind a free port, so a student's process waiting for one of theirs would receive what is
sent there (tokens) when it restarts; a socket path only root can create cannot be taken
(docs/GRADING.md, "A class on one server").
"""
import grp
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = Path("/srv/pytorch-course")


@dataclass(frozen=True)
class HubLayout:
    root: Path

    @property
    def env(self) -> Path:
        return self.root / "env"

    @property
    def python(self) -> Path:
        return self.env / "bin" / "python"

    @property
    def path(self) -> str:
        """PATH for everything the hub runs: its environment first (the hub's own PATH may lead into
        root's Python, which nobody else may run)."""
        return f"{self.env / 'bin'}:/usr/local/bin:/usr/bin:/bin"

    @property
    def code(self) -> Path:
        return self.root / "code"

    @property
    def exchange(self) -> Path:
        return self.root / "exchange"

    @property
    def course(self) -> Path:
        return self.root / "course"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def passwords(self) -> Path:
        return self.state / "initial-passwords.txt"

    @property
    def config(self) -> Path:
        return self.state / "jupyterhub_config.py"

    @property
    def log(self) -> Path:
        return self.state / "jupyterhub.log"

    @property
    def sockets(self) -> Path:
        return self.root / "sockets"

    @property
    def private_sockets(self) -> Path:
        return self.sockets / "private"

    @property
    def hub_socket(self) -> Path:
        return self.sockets / "hub.sock"

    @property
    def proxy_api_socket(self) -> Path:
        return self.private_sockets / "proxy-api.sock"

    def make_folders(self, instructors_group: str) -> None:
        """Create the folders with their modes (again on every run: a mode changed by hand is put back)."""
        gid = grp.getgrnam(instructors_group).gr_gid
        for path, mode, group in [(self.root, 0o755, 0), (self.env, 0o755, 0), (self.code, 0o755, 0),
                                  (self.exchange, 0o1777, 0), (self.state, 0o700, 0),
                                  (self.sockets, 0o755, 0), (self.private_sockets, 0o700, 0),
                                  # setgid: what anyone creates in the course directory stays the instructors'
                                  (self.course, 0o2770, gid)]:
            path.mkdir(parents=True, exist_ok=True)
            os.chown(path, 0, group)
            os.chmod(path, mode)
