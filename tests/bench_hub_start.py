"""How long a class's servers take to come up when everyone logs in at once: a benchmark, not a test.

    python tests/bench_hub_start.py [--students 30]

A hub is set up as `make hub` does it (hub_session.running_hub: its own folder, ports and Unix users,
all removed afterwards, the default per-person limits). Each student gets a token with their password,
then every server is started at the same moment through the hub's REST API, one thread each; the
script waits until the hub reports each one ready and prints when the first, the median and the last
came up, and the memory the servers then hold together (their cgroups).
"""
import argparse
import json
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from grader.hub import limits  # noqa: E402
from hub_session import running_hub  # noqa: E402

PREFIX = "cthb"
READY_SECONDS = 600


def call(url: str, token: str | None = None, method: str = "GET", body=None):
    headers = {"Authorization": f"token {token}"} if token else {}
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, method=method, headers=headers),
                                timeout=60) as response:
        text = response.read()
        return json.loads(text) if text else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--students", type=int, default=30)
    args = parser.parse_args()
    names = [f"{PREFIX}-s{i:02d}" for i in range(args.students)]
    roster = f"instructor {PREFIX}-teach\n" + "".join(f"student {n}\n" for n in names)
    with running_hub(roster, chapters=["00_setup"]) as hub:
        tokens = {n: call(f"{hub.url}/hub/api/users/{n}/tokens", method="POST",
                          body={"auth": {"username": n, "password": hub.passwords[n]}})["token"] for n in names}
        ready, errors = {}, []
        start = time.perf_counter()

        def spawn(name):
            try:
                call(f"{hub.url}/hub/api/users/{name}/server", tokens[name], "POST", {})
                while time.perf_counter() - start < READY_SECONDS:
                    server = call(f"{hub.url}/hub/api/users/{name}", tokens[name])["servers"].get("")
                    if server and server.get("ready"):
                        ready[name] = time.perf_counter() - start
                        return
                    time.sleep(0.5)
                errors.append(f"{name}: not ready after {READY_SECONDS} s")
            except Exception as err:   # noqa: BLE001 (a benchmark reports every failure and goes on)
                errors.append(f"{name}: {type(err).__name__}: {err}")

        threads = [threading.Thread(target=spawn, args=(n,)) for n in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
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
