"""The Dask cluster that `make autograde` grades on: by default a LocalCluster of one worker process
with JOBS threads, which the command starts and stops itself, or an existing cluster
(`make autograde SCHEDULER=tcp://host:8786`). docs/GRADING.md, "How parallel grading works".
"""
import logging
import tempfile
from contextlib import contextmanager

CONNECT_SECONDS = 10   # an unreachable scheduler is reported after this long, nothing written


class SchedulerUnreachable(RuntimeError):
    pass


@contextmanager
def grading_client(jobs: int, scheduler: str | None = None, connect_seconds: float | None = None,
                   wall: bool = True):
    """A distributed.Client on `scheduler`, or on a LocalCluster of `jobs` threads on 127.0.0.1
    (`wall`: whether its kernels will be walled, warm ones then)."""
    from distributed import Client, LocalCluster
    connect_seconds = connect_seconds or CONNECT_SECONDS
    if scheduler:
        try:
            client = Client(scheduler, timeout=connect_seconds, set_as_default=False)
        except (OSError, TimeoutError) as err:
            raise SchedulerUnreachable(
                f"cannot reach the Dask scheduler at {scheduler} within {connect_seconds:g} s ({err}). "
                "Is `dask scheduler` running there, and is the address right? Nothing was graded.") from None
        with client:
            yield client
        return
    # One worker process, `jobs` threads: each thread grades one batch at a time in an nbgrader process
    # of its own, and they share the worker's zygote and warm nbgrader (each imports torch once, 4 s
    # and 3.5 s). No memory limit on the worker process (kernels have theirs, behind the wall), no
    # dashboard, loopback only.
    with warm_servers(wall) as named, \
            LocalCluster(n_workers=1, threads_per_worker=jobs, processes=True, host="127.0.0.1", env=named,
                         dashboard_address=":0", memory_limit=0, silence_logs=logging.ERROR) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


@contextmanager
def warm_servers(wall: bool):
    """The zygote and the warm nbgrader for a LocalCluster's worker, started here while the cluster
    starts, so that their imports (torch in each, 4 s and 3.5 s) overlap the worker's own start
    rather than follow it; named to the worker in its environment ({variable: path}); stopped with
    the cluster. A worker that finds them gone starts its own (grader/class_grading/batch.py)."""
    from grader.class_grading.warm_nbgrader import WarmNbgrader
    from grader.course import tool_env
    from grader.wall import sandbox, warm_kernels
    servers = {WarmNbgrader.PATH: WarmNbgrader(tool_env())}
    with tempfile.TemporaryFile() as kernels_stderr:   # kernels' own messages, not the instructor's terminal
        try:
            if wall and warm_kernels.available():
                servers[sandbox.Zygote.PATH] = sandbox.start_zygote(kernels_stderr)
            yield {name: server.path for name, server in servers.items()}
        finally:
            for server in servers.values():
                server.stop()
