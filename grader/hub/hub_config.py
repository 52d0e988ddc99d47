"""JupyterHub's settings for a class on one server, called from the config `make hub` writes.

The hub runs as root and starts each person's JupyterLab as their Unix user (the local spawner),
with the hub's environment; people log in with their Unix password (PAM). Only the roster's
people may log in. The URL's port is the people's; the hub's API and the proxy's API listen on Unix
sockets that only root can create (grader/hub/layout.py says why), and the class reports service (a
JupyterHub service, which must have an http URL) on a port below ip_unprivileged_port_start, which
only root can bind; where there is none, the service is off.
Each person's JupyterLab and kernels run inside their own memory, CPU and process limits (cgroups,
grader/hub/limits.py) unless `cgroups` is False, and servers left idle are stopped (their files stay).
"""
import sys
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from grader.hub import busy_activity, port_owner
from grader.hub.layout import HubLayout
from grader.hub.limits import Settings


def configure(c, root: Path, url: str, proxy: str, people: list, instructors: list = (),
              limits: dict | None = None, cgroups: bool = True) -> None:
    settings = Settings(**(limits or {}))
    layout = HubLayout(Path(root))
    c.JupyterHub.bind_url = url
    # everyone's server talks to the hub's API: a socket anyone may connect to, in a folder only root writes
    c.JupyterHub.hub_bind_url = c.JupyterHub.hub_connect_url = unix_url(layout.hub_socket)
    c.JupyterHub.hub_socket_mode = 0o666
    c.ConfigurableHTTPProxy.api_url = unix_url(layout.proxy_api_socket)
    c.ConfigurableHTTPProxy.command = [proxy]
    c.ConfigurableHTTPProxy.pid_file = str(layout.state / "proxy.pid")
    c.JupyterHub.db_url = f"sqlite:///{layout.state / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(layout.state / "jupyterhub_cookie_secret")

    c.JupyterHub.authenticator_class = "pam"
    c.Authenticator.allowed_users = set(people)
    c.PAMAuthenticator.open_sessions = False   # no login sessions for web logins (and none in containers)

    c.Spawner.cmd = [str(layout.env / "bin" / "jupyterhub-singleuser")]
    c.Spawner.default_url = "/lab"
    c.Spawner.notebook_dir = "~"
    # the kernels' connection files and Unix sockets (deploy.KERNEL_TRANSPORT), in the person's home
    environment = {"PATH": layout.path, "JUPYTER_RUNTIME_DIR": person_runtime_folder}
    if cgroups:
        c.JupyterHub.spawner_class = "grader.hub.spawner.LimitedSpawner"
        c.Spawner.mem_limit = settings.memory
        c.Spawner.cpu_limit = settings.cpus
        c.LimitedSpawner.pids_limit = settings.processes
        c.LimitedSpawner.class_mem_limit = settings.class_memory_limit()
        # PyTorch starts a thread per core for each operation: past the person's CPU quota they would only wait
        environment["OMP_NUM_THREADS"] = str(max(1, int(settings.cpus)))
    else:
        c.JupyterHub.spawner_class = "localprocess"
    c.Spawner.environment = environment
    # a class logging in at once on a busy 2-core server: 30 starts took 35 s on an idle one
    c.Spawner.start_timeout = c.Spawner.http_timeout = settings.start_timeout

    # Feedback on submit (grader/hub/autofeedback.py): the hub starts it and restarts it if it dies.
    # It runs as the hub's user (root), the instructors' side: it reads the exchange's inbound,
    # writes the course directory, and grades behind the wall as `make autograde` does.
    feedback = [str(layout.python), "-m", "grader.hub.autofeedback", "--course", str(layout.course)]
    if cgroups:
        # ... its grading in a group of its own, below the people's servers for the CPU (grader/hub/limits.py)
        feedback = [str(layout.python), "-m", "grader.hub.limits", f"--memory={settings.grading_memory}",
                    f"--cpu-shares={settings.grading_cpu_shares}", "--", *feedback]
    c.JupyterHub.services = [{
        "name": "autofeedback",
        "command": feedback,
        "cwd": str(layout.course),
        "environment": {"PATH": layout.path},
    }]
    reports_port = privileged_port()
    if reports_port is None:
        print("the class reports service is off: any user of this server may bind any port "
              "(net.ipv4.ip_unprivileged_port_start is 0), so one could pose as it; `make report` writes "
              "the same pages", file=sys.stderr)
    else:
        c.JupyterHub.services.append({
            # The class reports (grader/hub/reports_service.py), for instructors only: the hub lets only the
            # instructors' group reach it, and the service checks the Unix group again.
            "name": "reports",
            "url": f"http://127.0.0.1:{reports_port}",
            "command": [str(layout.python), "-m", "grader.hub.reports_service", "--course", str(layout.course)],
            "cwd": str(layout.course),
            "environment": {"PATH": layout.path},
            "display": True,
            "oauth_no_confirm": True,
        })
    c.JupyterHub.load_groups = {"instructors": {"users": sorted(instructors)}}
    c.JupyterHub.load_roles = [{"name": "class-reports", "description": "read the class reports",
                                "scopes": ["access:services!service=reports"], "groups": ["instructors"]}]
    if settings.idle_timeout:
        # Idle servers stopped: the hub's culler looks every cull_every seconds and stops a server with no
        # activity for idle_timeout (files stay in the home; the next login starts a fresh server). Each
        # server tells the hub when it was last used (a request, a kernel message, a kernel running a cell for
        # up to busy_limit: grader/hub/busy_activity.py) as often as the culler looks.
        c.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] = str(settings.cull_every)
        c.Spawner.environment[busy_activity.ENV] = str(settings.busy_limit)
        c.JupyterHub.services.append({
            "name": "idle-culler",
            # its HTTP client cannot reach a Unix socket: the hub's API through the proxy's public port
            "command": [str(layout.python), "-m", "jupyterhub_idle_culler", f"--timeout={settings.idle_timeout}",
                        f"--cull-every={settings.cull_every}", f"--url={public_api_url(url)}"],
            "environment": {"PATH": layout.path},
        })
        c.JupyterHub.load_roles.append({"name": "idle-culler", "description": "stop idle servers",
                                        "scopes": ["list:users", "read:users:activity", "read:servers",
                                                   "delete:servers"], "services": ["idle-culler"]})


def person_runtime_folder(spawner) -> str:
    """JUPYTER_RUNTIME_DIR of a person's server (JupyterHub calls it with the person's spawner)."""
    import pwd
    from grader.hub.deploy import runtime_folder
    return str(runtime_folder(pwd.getpwnam(spawner.user.name).pw_dir))


def unix_url(socket: Path) -> str:
    """The http+unix:// URL of a socket, as JupyterHub and its proxy write it."""
    return f"http+unix://{quote(str(socket), safe='')}"


def public_api_url(url: str) -> str:
    """The hub's REST API through the proxy's public address (on this machine's loopback when the
    hub listens on every interface)."""
    parts = urlsplit(url)
    host = parts.hostname if parts.hostname not in (None, "", "0.0.0.0", "::") else "127.0.0.1"
    netloc = f"[{host}]" if ":" in host else host
    path = parts.path.rstrip("/") + "/hub/api"
    return urlunsplit((parts.scheme, f"{netloc}:{parts.port}" if parts.port else netloc, path, "", ""))


def privileged_port(first_unprivileged: int | None = None) -> int | None:
    """A port on 127.0.0.1 that is free now and that only root can bind (below the kernel's
    ip_unprivileged_port_start; 1024 unless a container lowered it), highest first; None if there is
    no such port. Chosen at each start of the hub, which runs this as root."""
    if first_unprivileged is None:
        first_unprivileged = port_owner.first_unprivileged_port()
    top = min(first_unprivileged, 1024)
    return next((port for port in range(top - 1, top // 2, -1) if port_owner.free(port)), None)
