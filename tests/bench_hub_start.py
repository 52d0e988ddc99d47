"""How long a class's servers take to come up when everyone logs in at once: a benchmark, not a test.

    python tests/bench_hub_start.py [--students 30]

A hub is set up as `make hub` does it (hub_session.running_hub: its own folder, ports and Unix users,
all removed afterwards, the default per-person limits). Each student gets a token with their password,
then every server is started at the same moment through the hub's REST API, one thread each; the
script waits until the hub reports each one ready and prints when the first, the median and the last
came up, and the memory the servers then hold together (their cgroups).
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from grader.hub import limits  # noqa: E402
from hub_session import running_hub, start_servers_at_once, token_of  # noqa: E402

PREFIX = "cthb"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--students", type=int, default=30)
    args = parser.parse_args()
    names = [f"{PREFIX}-s{i:02d}" for i in range(args.students)]
    roster = f"instructor {PREFIX}-teach\n" + "".join(f"student {n}\n" for n in names)
    with running_hub(roster, chapters=["00_setup"]) as hub:
        ready, errors = start_servers_at_once(hub, {n: token_of(hub, n) for n in names})
        used = sum(limits.PersonGroups(n).memory_used() for n in ready)
        times = sorted(ready.values())
        for error in errors:
            print(error)
        print(f"{len(ready)} of {len(names)} servers ready; first {times[0]:.1f} s, median "
              f"{statistics.median(times):.1f} s, last {times[-1]:.1f} s after the {len(names)} starts were asked for; "
              f"together {used / (1 << 30):.2f} GiB in their memory groups")
        return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
