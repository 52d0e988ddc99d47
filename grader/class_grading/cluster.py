"""The Dask cluster that `make autograde` grades on: by default a LocalCluster of one worker with
JOBS threads in the command's own process, which the command starts and stops itself, or an
existing cluster (`make autograde SCHEDULER=tcp://host:8786`). docs/GRADING.md, "How parallel
grading works".
"""
import logging
import os
import tempfile
from contextlib import contextmanager

CONNECT_SECONDS = 10   # an unreachable scheduler is reported after this long, nothing written


class SchedulerUnreachable(RuntimeError):
    pass


@contextmanager
def grading_client(jobs: int, scheduler: str | None = None, connect_seconds: float | None = None,
                   wall: bool = True):
    """A distributed.Client on `scheduler`, or on a LocalCluster of `jobs` threads in this
    process (`wall`: whether its kernels will be walled, warm ones then)."""
    from distributed import Client
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
    # One worker with `jobs` threads, in this process: each thread grades one batch at a time in an
    # nbgrader process of its own, forked from this process's warm nbgrader, its kernels forked from
    # this process's zygote; a worker process would only add its own start and stop (measured in
    # docs/GRADING.md, "Where"). No memory limit (kernels have theirs, behind the wall).
    with warm_servers(wall), private_cluster(jobs) as cluster, Client(cluster, set_as_default=False) as client:
        yield client


# Dask's diagnostics that run while the cluster idles (private_cluster says why they are off or slower)
QUIET = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
         "distributed.admin.system-monitor.interval": "5s"}


@contextmanager
def private_cluster(jobs: int):
    """A LocalCluster in this process that nobody else on the machine can reach or write to. Dask
    serves HTTP even without a dashboard (the scheduler on 0.0.0.0:8787, a fixed port that anyone
    could take first, the worker on another port of every interface): here both listen on 127.0.0.1
    and serve no route at all (tests/test_cluster_grading.py). Its scratch is in a folder made now,
    mode 700: Dask adopts an existing /tmp/dask-scratch-space whoever owns it (docs/GRADING.md,
    "The exchange").
    Idle, it costs little: the feedback service keeps one for the hub's whole life, and Dask's defaults
    kept it at 4.6 % of a core doing nothing (a profiler sampling the worker's threads every 10 ms, a
    20 ms event-loop tick, system metrics every 0.5 s), 0.4 % without them (QUIET). They serve Dask's
    dashboard and its warnings about a blocked event loop, neither of which this cluster has."""
    import dask
    from distributed import LocalCluster
    loopback = "127.0.0.1:0"
    with tempfile.TemporaryDirectory(prefix="grading-cluster-") as scratch, \
            dask.config.set({"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": [], **QUIET}), \
            LocalCluster(n_workers=1, threads_per_worker=jobs, processes=False, memory_limit=0,
                         dashboard_address=loopback, scheduler_kwargs={"dashboard": False},
                         worker_dashboard_address=loopback, local_directory=scratch,
                         silence_logs=logging.ERROR) as cluster:
        yield cluster


@contextmanager
def warm_servers(wall: bool):
    """This process's zygote (`wall`: when its kernels will be walled, warm ones then) and warm
    nbgrader, started now, so that their imports (torch in each, 4 s and 3.5 s) overlap the cluster's
    start; the in-process worker's threads use them (grader/class_grading/batch.py); stopped with
    the cluster. The worker's tasks set the COURSE_* settings they are sent in the environment,
    which here is this process's: those are put back afterwards."""
    from grader.class_grading import batch
    from grader.wall import sandbox
    settings = _course_settings()
    with tempfile.TemporaryFile() as kernels_stderr:   # kernels' own messages, not the instructor's terminal
        kept_stderr, sandbox.Zygote.stderr = sandbox.Zygote.stderr, kernels_stderr
        try:
            batch.start_servers(wall)
            yield
        finally:
            batch.stop_servers()
            sandbox.Zygote.stderr = kept_stderr
            for name in _course_settings():
                del os.environ[name]
            os.environ.update(settings)


def _course_settings() -> dict:
    return {name: value for name, value in os.environ.items() if name.startswith("COURSE_")}
