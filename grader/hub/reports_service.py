"""The class reports as a hub service page that only instructors may open: /services/reports/.

    python -m grader.hub.reports_service --course DIR [--group GROUP]

JupyterHub starts it (grader/hub/hub_config.py) and gives it its address and OAuth client. Two locks
keep students out: the hub grants the `access:services!service=reports` scope to the instructors'
group only, so a student's login is refused there (403), and the service itself answers 403 to anyone
not in the instructors' Unix group (the group that owns the course directory). Each request for a page
first remakes the reports if the gradebook changed since they were made (grader/reports/), so the
page follows the grading as hand-ins come in. Links to graded notebooks open in the instructor's own
JupyterLab (hub/user-redirect/...). docs/GRADING.md, "What the class got wrong".
"""
import argparse
import grp
import os
import re
import threading
from pathlib import Path

from grader.hub.deploy import COURSE_LINK
from grader.hub.unix_users import INSTRUCTORS
from grader.reports import OUT

SERVICE = "reports"
PAGE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.(html|csv)")
TYPES = {"html": "text/html; charset=utf-8", "csv": "text/csv; charset=utf-8"}
# The pages hold student text (escaped) and embedded figures: nothing in them may load or run anything.
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'self'"


class Reports:
    """The reports folder, remade when the gradebook is newer than the index (one remake at a time)."""

    def __init__(self, course: Path, notebooks_url: str):
        self.course, self.out, self.notebooks_url = Path(course), Path(course) / OUT, notebooks_url
        self.lock = threading.Lock()

    def stale(self) -> bool:
        index = self.out / "index.html"
        gradebook = self.course / "gradebook.db"
        return not index.is_file() or (gradebook.is_file() and gradebook.stat().st_mtime > index.stat().st_mtime)

    def page(self, name: str) -> bytes | None:
        with self.lock:
            if self.stale() and (self.course / "gradebook.db").is_file():
                # imported at the first remake, not at the service's start (matplotlib, nbgrader: about
                # 1.5 CPU-s): the hub starts the service with every start of the hub, and again after a crash
                from grader.reports.__main__ import write_reports
                write_reports(self.course, out=self.out, notebooks_url=self.notebooks_url)
        path = self.out / name
        return path.read_bytes() if PAGE.fullmatch(name) and path.is_file() else None


def is_instructor(name: str, group: str = INSTRUCTORS) -> bool:
    try:
        return name in grp.getgrnam(group).gr_mem
    except KeyError:
        return False


def make_app(reports: Reports, group: str):
    from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
    from jupyterhub.utils import url_path_join
    from tornado import web
    from tornado.ioloop import IOLoop

    class ReportPage(HubOAuthenticated, web.RequestHandler):
        @web.authenticated
        async def get(self, name: str):
            user = self.current_user
            if not is_instructor(user["name"], group):
                raise web.HTTPError(403, "the class reports are for instructors")
            name = name or "index.html"
            # remaking the reports takes a second or two: off the event loop, which serves the others
            body = await IOLoop.current().run_in_executor(None, reports.page, name)
            if body is None:
                raise web.HTTPError(404)
            self.set_header("Content-Type", TYPES[name.rsplit(".", 1)[1]])
            self.set_header("Content-Security-Policy", CSP)
            self.set_header("Cache-Control", "no-store")
            self.write(body)

    prefix = os.environ["JUPYTERHUB_SERVICE_PREFIX"]
    return web.Application([
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
        (url_path_join(prefix, "(.*)"), ReportPage),
    ], cookie_secret=os.urandom(32))


def main(argv=None) -> int:
    from tornado.ioloop import IOLoop
    from urllib.parse import urlsplit
    parser = argparse.ArgumentParser(prog="python -m grader.hub.reports_service", description=__doc__)
    parser.add_argument("--course", type=Path, required=True)
    parser.add_argument("--group", default=INSTRUCTORS, help="the Unix group whose members may read the reports")
    args = parser.parse_args(argv)
    hub_prefix = os.environ.get("JUPYTERHUB_BASE_URL", "/") + "hub/"
    reports = Reports(args.course, f"{hub_prefix}user-redirect/lab/tree/{COURSE_LINK}/autograded")
    address = urlsplit(os.environ["JUPYTERHUB_SERVICE_URL"])
    make_app(reports, args.group).listen(address.port, address.hostname)
    IOLoop.current().start()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
