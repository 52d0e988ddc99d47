"""The class hub's spawner: JupyterHub's local spawner, with each person's server in their own cgroups
(grader/hub/limits.py), their own /tmp, /var/tmp, /run/lock and /dev/shm (grader/hub/private_mounts.py), and a
port nobody else holds (grader/hub/port_owner.py). docs/GRADING.md, "A class on one server".

A module of its own because importing JupyterHub's spawner costs about 1 CPU-s, which the other users
of grader.hub.limits (every kernel of the hub's environment, the feedback and reports services) do
not need; only the hub imports this (hub_config.py names it).
"""
import asyncio
import time

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import Integer

from grader.hub import port_owner, private_mounts
from grader.hub.limits import LimitsError, PersonGroups, limit_class_memory

# a start whose port another process holds is tried again on another port this many times in all
PORT_ATTEMPTS = 3


class LimitedSpawner(LocalProcessSpawner):
    """JupyterHub's local spawner, with each person's server in their own cgroups.
    Spawner.mem_limit and Spawner.cpu_limit are the limits (JupyterHub passes them on to the
    server as MEM_LIMIT and CPU_LIMIT); pids_limit caps processes and threads."""

    pids_limit = Integer(512, help="processes and threads per person (cgroup pids.max)").tag(config=True)
    class_mem_limit = Integer(0, help="bytes for all people's servers together (0: none)").tag(config=True)
    tmp_size = Integer(0, help="bytes of each of the person's own /tmp, /var/tmp, /run/lock and /dev/shm "
                               "(grader/hub/private_mounts.py); 0: a quarter of the memory limit").tag(config=True)

    def _groups(self) -> PersonGroups:
        return PersonGroups(self.user.name)

    async def start(self):
        if not self.mem_limit or not self.cpu_limit:
            raise LimitsError("LimitedSpawner needs Spawner.mem_limit and Spawner.cpu_limit")
        groups = self._groups()
        # what an earlier server left (it crashed, was OOM-killed, or a stop could not end it) goes first
        if not await asyncio.to_thread(groups.remove, True):
            raise LimitsError(f"{self.user.name}'s groups still hold processes that could not be killed: "
                              f"{sorted(groups.pids())}")
        if self.class_mem_limit:
            try:
                limit_class_memory(int(self.class_mem_limit))
            except OSError as err:   # the class already holds more (a limit lowered in settings.txt)
                self.log.error("the class's memory limit %d could not be set: %s", self.class_mem_limit, err)
        for attempt in range(1, PORT_ATTEMPTS + 1):
            groups.create(int(self.mem_limit), float(self.cpu_limit), int(self.pids_limit))
            if not self.port:
                self.port = await asyncio.to_thread(port_owner.unclaimed_ports)
            address = await super().start()
            if await self._own_port(address[1], groups):
                return address
            taken, self.port = self.port, 0     # stopped, groups gone: the next try picks another port
            self.log.warning("port %d of %s's server is held by another process (try %d of %d)",
                             taken, self.user.name, attempt, PORT_ATTEMPTS)
        raise LimitsError(f"{PORT_ATTEMPTS} ports in a row, which {self.user.name}'s server was to use, were "
                          "held by another process: the start was refused")

    async def _own_port(self, port: int, groups: PersonGroups) -> bool:
        """Wait until the server listens on `port`. False only when another process holds it: the
        server is then stopped, and the start tries another port. True when the server's own process
        listens, and also when the server died or never listened within http_timeout: the hub's own
        wait reports that, with the server's exit status."""
        deadline, pause = time.monotonic() + self.http_timeout, 0.1
        while time.monotonic() < deadline and await self.poll() is None:
            holder = await asyncio.to_thread(port_owner.holder, port, groups.pids())
            if holder == "theirs":
                return True
            if holder == "foreign":
                await self.stop(now=True)
                return False
            # a server takes seconds to listen; a class starting at once would otherwise have the
            # hub ask for the listening sockets five times a second per person while it starts them all
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, 1.0)
        return True

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)
        groups = self._groups()
        private_folders = private_mounts.preparer(self.tmp_size or int(self.mem_limit) // 4)

        def preexec():
            groups.join()          # still root, in the child, before anything of the person's runs
            private_folders()      # what the server writes there is charged to the groups just joined
            become_user()
        return preexec

    async def stop(self, now=False):
        """The server, and then everything else of the person's: a process that left the server's
        session (a `setsid` daemon) is still in their groups, and would outlive a stop, a cull or a
        crash, holding their memory or a port that a service needs. Killed until none is left (a
        fork racing the kill meets the pids limit), then the groups go."""
        await super().stop(now)
        if not await asyncio.to_thread(self._groups().remove, True):
            self.log.error("%s's groups still hold processes after the server stopped: %s", self.user.name,
                           sorted(self._groups().pids()))
