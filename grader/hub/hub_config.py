"""JupyterHub's settings for a class on one server, called from the config `make hub` writes.

The hub runs as root and starts each person's JupyterLab as their Unix user (the local spawner),
with the hub's environment; people log in with their Unix password (PAM). Only the roster's
people may log in. Ports: the URL's for people, the next one for the hub's API, the one after
for the proxy's API, the next for the class reports service, all on 127.0.0.1 unless the URL says otherwise.
Each person's JupyterLab and kernels run inside their own memory, CPU and process limits (cgroups,
grader/hub/limits.py) unless `cgroups` is False, and servers left idle are stopped (their files stay).
"""
from pathlib import Path
from urllib.parse import urlsplit

from grader.hub import busy_activity
from grader.hub.layout import HubLayout
from grader.hub.limits import Settings

SPAWN_SECONDS = 300   # a class logging in at once on a busy 2-core server: 30 starts took 35 s on an idle one


def configure(c, root: Path, url: str, proxy: str, people: list, instructors: list = (),
              limits: dict | None = None, cgroups: bool = True) -> None:
    settings = Settings(**(limits or {}))
    layout = HubLayout(Path(root))
    port = urlsplit(url).port
    c.JupyterHub.bind_url = url
    c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{port + 1}"
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{port + 2}"
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
    environment = {"PATH": layout.path}
    if cgroups:
        c.JupyterHub.spawner_class = "grader.hub.limits.LimitedSpawner"
        c.Spawner.mem_limit = settings.memory
        c.Spawner.cpu_limit = settings.cpus
        c.LimitedSpawner.pids_limit = settings.processes
        # PyTorch starts a thread per core for each operation: past the person's CPU quota they would only wait
        environment["OMP_NUM_THREADS"] = str(max(1, int(settings.cpus)))
    else:
        c.JupyterHub.spawner_class = "localprocess"
    c.Spawner.environment = environment
    c.Spawner.start_timeout = SPAWN_SECONDS
    c.Spawner.http_timeout = SPAWN_SECONDS

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
    }, {
        # The class reports (grader/hub/reports_service.py), for instructors only: the hub lets only the
        # instructors' group reach it, and the service checks the Unix group again.
        "name": "reports",
        "url": f"http://127.0.0.1:{port + 3}",
        "command": [str(layout.python), "-m", "grader.hub.reports_service", "--course", str(layout.course)],
        "cwd": str(layout.course),
        "environment": {"PATH": layout.path},
        "display": True,
        "oauth_no_confirm": True,
    }]
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
            "command": [str(layout.python), "-m", "jupyterhub_idle_culler", f"--timeout={settings.idle_timeout}",
                        f"--cull-every={settings.cull_every}"],
            "environment": {"PATH": layout.path},
        })
        c.JupyterHub.load_roles.append({"name": "idle-culler", "description": "stop idle servers",
                                        "scopes": ["list:users", "read:users:activity", "read:servers",
                                                   "delete:servers"], "services": ["idle-culler"]})
