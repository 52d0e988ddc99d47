"""What one student's server holds in its memory cgroup on a class's hub (`make hub`, default limits).

    sudo .venv/bin/python tests/bench_hub_limits.py

Sets up a hub as `make hub` does (one instructor, one student: Unix users cthlbench-*, removed
afterwards), starts the student's server through the hub's API, lets it settle, and reads the
person's memory cgroup (usage, and its rss and page cache from memory.stat); then starts a kernel,
imports torch in it, and reads again. The cgroup counts what the person's processes charged, page
cache included: the number the limit is held against.
"""
import time

import pytest

import test_hub_limits as t
from grader.hub import limits
from hub_session import running_hub

SETTLE_SECONDS = 10
PREFIX = "cthlbench"


def read(groups: limits.PersonGroups) -> str:
    stat = dict(line.split() for line in groups.read("memory", "memory.stat").splitlines())
    mib = lambda n: int(n) / (1 << 20)   # noqa: E731
    return (f"usage {mib(groups.memory_used()):6.0f} MiB  rss {mib(stat['total_rss']):6.0f} MiB  "
            f"cache {mib(stat['total_cache']):6.0f} MiB")


def main() -> None:
    settings = limits.Settings(idle_timeout=0)
    teach, student = f"{PREFIX}-teach", f"{PREFIX}-s"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits, "read_settings", lambda roster: settings)
        with running_hub(f"instructor {teach}\nstudent {student}\n", chapters=["00_setup"]) as hub:
            person = t.Person(hub, student)
            started = time.time()
            person.start()
            print(f"server ready in {time.time() - started:.1f} s")
            time.sleep(SETTLE_SECONDS)
            print("idle server:          ", read(person.groups))
            client = person.kernel()
            time.sleep(SETTLE_SECONDS)
            print("+ an idle kernel:      ", read(person.groups))
            t.run(client, "import torch; x = torch.ones(10); print(torch.__version__)")
            time.sleep(SETTLE_SECONDS)
            print("+ torch imported:      ", read(person.groups))
            client.stop_channels()
            person.groups.remove(kill=True)


if __name__ == "__main__":
    main()
