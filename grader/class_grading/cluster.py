"""The Dask cluster that `make autograde` grades on: by default a LocalCluster of JOBS single-threaded
worker processes that the command starts and stops itself, or an existing cluster
(`make autograde SCHEDULER=tcp://host:8786`). docs/GRADING.md, "How parallel grading works".
"""
import logging
from contextlib import contextmanager

CONNECT_SECONDS = 10   # an unreachable scheduler is reported after this long, nothing written


class SchedulerUnreachable(RuntimeError):
    pass


@contextmanager
def grading_client(jobs: int, scheduler: str | None = None, connect_seconds: float | None = None):
    """A distributed.Client on `scheduler`, or on a LocalCluster of `jobs` workers on 127.0.0.1."""
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
    # one thread per worker: a worker grades one batch at a time, and hands its warm zygote to
    # one nbgrader process at a time (grader/wall/sandbox.py, Zygote.for_child); no memory limit
    # on the worker process (kernels have theirs, behind the wall), no dashboard, loopback only
    with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0", memory_limit=0, silence_logs=logging.ERROR) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client
