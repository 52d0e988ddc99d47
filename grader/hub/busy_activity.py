"""A kernel running code counts as use: the hub's idle culler never stops a server in the middle of
a student's training run (docs/GRADING.md, "A class on one server").

The culler (jupyterhub-idle-culler) stops a server by the last activity the server reports to the hub.
jupyter_server counts requests and kernel messages, but a cell that computes for an hour without
printing sends no message, and a closed browser sends no request: the server looked idle and was
stopped, training and all (tests/test_hub_limits.py: a 39 s cell that prints nothing, a 25 s idle
timeout, no browser; without this extension the server is stopped mid-cell). This server extension, which `make hub` turns on for every server of the class,
looks at the kernels every few seconds and, while one is busy, says so through the server's
`busy_kernels_last_activity` setting (jupyter_server counts every setting whose name ends in
`_last_activity`). A cell that has run for longer than COURSE_BUSY_LIMIT seconds (the hub's
`busy_limit` setting) stops counting: a loop left running does not hold a server for ever.
"""
import os
import time
from datetime import datetime, timezone

ENV = "COURSE_BUSY_LIMIT"
LOOK_EVERY_MS = 5_000
SETTING = "busy_kernels_last_activity"


def _jupyter_server_extension_points():
    return [{"module": "grader.hub.busy_activity"}]


class BusyKernels:
    """Which kernels are busy, and since when (as first seen busy by `look`)."""

    def __init__(self, kernels, limit: float):
        self.kernels, self.limit, self.since = kernels, limit, {}

    def look(self, now: float) -> bool:
        """Whether a kernel is busy now with a cell that started less than `limit` seconds ago."""
        busy = {kid for kid in self.kernels.list_kernel_ids()
                if getattr(self.kernels.get_kernel(kid), "execution_state", None) == "busy"}
        self.since = {kid: self.since.get(kid, now) for kid in busy}
        return any(now - started < self.limit for started in self.since.values())


def _load_jupyter_server_extension(server_app):
    limit = float(os.environ.get(ENV) or 0)
    if limit <= 0:
        return
    from tornado.ioloop import PeriodicCallback
    kernels = BusyKernels(server_app.kernel_manager, limit)
    settings = server_app.web_app.settings

    def look():
        if kernels.look(time.monotonic()):
            settings[SETTING] = datetime.now(timezone.utc)

    PeriodicCallback(look, LOOK_EVERY_MS).start()
    server_app.log.info("busy kernels count as activity for up to %.0f s (grader.hub.busy_activity)", limit)


CONFIG = {"ServerApp": {"jpserver_extensions": {"grader.hub.busy_activity": True}}}
