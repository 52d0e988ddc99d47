"""`python -m grader.hub ROSTER [--root DIR] [--url URL] [--no-start]`: what `make hub` runs."""
import argparse
import signal
import sys
from pathlib import Path

from grader.hub.deploy import DEFAULT_URL, HubError, setup, start
from grader.hub.layout import DEFAULT_ROOT
from grader.hub.roster import RosterError
from grader.hub.unix_users import UserError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.hub", description=__doc__)
    parser.add_argument("roster", type=Path)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help=f"where the hub lives ({DEFAULT_ROOT})")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"the hub's address ({DEFAULT_URL})")
    parser.add_argument("--no-start", action="store_true", help="set up, do not start JupyterHub")
    args = parser.parse_args(argv)
    try:
        layout = setup(args.roster, args.root, args.url)
    except (HubError, RosterError, UserError) as err:
        print(f"make hub: {err}", file=sys.stderr)
        return 2
    if args.no_start:
        return 0
    hub = start(layout)
    print(f"make hub: JupyterHub at {args.url} (log: {layout.log}); Ctrl-C stops it")
    signal.signal(signal.SIGTERM, lambda *_: hub.terminate())
    try:
        return hub.wait()
    except KeyboardInterrupt:
        hub.terminate()
        return hub.wait()


if __name__ == "__main__":
    raise SystemExit(main())
