"""What one student costs in memory on a class's JupyterHub (`make hub`), to tell how many fit on this server.

    sudo .venv/bin/python tests/bench_hub_memory.py [--students 3]

1. sets up a hub as `make hub` does, in a temporary folder with its own ports, one instructor and
   N students (Unix users cthubmem-*, all removed afterwards, as is everything else it made);
2. logs each student in with Debian's chromium and waits for their JupyterLab, then lets it settle;
3. measures each student's idle server (jupyterhub-singleuser and its children, no kernel):
   PSS (shared pages divided among the processes that share them) and RSS, from smaps_rollup;
4. opens a notebook for the first student, runs `import torch` in its kernel, measures the kernel;
5. prints the table and, last, how many students this machine holds (PSS, total memory only: the
   system, the hub and what students compute in their kernels come on top).
"""
import argparse
import os
import pwd
import statistics
import time
from pathlib import Path

import nbformat

from hub_session import SLOW, chromium, log_in, running_hub

PREFIX = "cthubmem"
SETTLE_SECONDS = 10
NOTEBOOK = "bench-torch.ipynb"


def processes() -> dict:
    """{pid: (parent pid, uid, command line)} of every process now."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue   # gone since
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        found[int(entry.name)] = (int(fields["PPid"]), int(fields["Uid"].split()[0]), cmdline)
    return found


def tree(pid: int, procs: dict) -> list:
    """pid and all its descendants."""
    children = [p for p, (parent, _, _) in procs.items() if parent == pid]
    return [pid] + [q for child in children for q in tree(child, procs)]


def memory_mib(pids) -> tuple:
    """(PSS, RSS) of the processes together, in MiB."""
    total = {"Pss": 0, "Rss": 0}
    for pid in pids:
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue   # ended since it was listed
        for line in rollup.splitlines():
            key, _, value = line.partition(":")
            if key in total:
                total[key] += int(value.split()[0])   # kB
    return total["Pss"] / 1024, total["Rss"] / 1024


def server_pid(name: str, procs: dict) -> int:
    """The student's jupyterhub-singleuser process (the one whose parent is not one)."""
    uid = pwd.getpwnam(name).pw_uid
    ours = {p for p, (_, owner, cmd) in procs.items() if owner == uid and "jupyterhub-singleuser" in cmd}
    (pid,) = [p for p in ours if procs[p][0] not in ours]
    return pid


def run_import_torch(page, hub, name: str) -> None:
    """A notebook whose one cell imports torch, opened in the student's JupyterLab and run."""
    from playwright.sync_api import expect
    entry = pwd.getpwnam(name)
    path = Path(entry.pw_dir) / NOTEBOOK
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import torch")], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}})
    nbformat.write(nb, path)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    page.goto(f"{hub.url}/user/{name}/lab/tree/{NOTEBOOK}")
    expect(page.get_by_text("Python 3 (ipykernel) | Idle")).to_be_visible(timeout=SLOW)
    page.locator(".jp-NotebookPanel .jp-Cell .cm-content").first.click()
    page.keyboard.press("Shift+Enter")
    expect(page.locator(".jp-NotebookPanel .jp-InputPrompt").first).to_have_text("[1]:", timeout=SLOW)


def total_memory_gib() -> float:
    line = next(row for row in Path("/proc/meminfo").read_text().splitlines() if row.startswith("MemTotal:"))
    return int(line.split()[1]) / 1024 ** 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3)
    args = parser.parse_args()
    if args.students < 1:
        parser.error("--students: at least 1")
    if os.geteuid() != 0:
        raise SystemExit("the benchmark creates Unix users and starts JupyterHub: run it as root")
    students = [f"{PREFIX}-s{i}" for i in range(1, args.students + 1)]
    roster = f"instructor {PREFIX}-teach\n" + "".join(f"student {name}\n" for name in students)

    with running_hub(roster) as hub, chromium() as browser:
        pages = {name: log_in(browser, hub, name) for name in students}
        time.sleep(SETTLE_SECONDS)
        procs = processes()
        servers = {name: memory_mib(tree(server_pid(name, procs), procs)) for name in students}

        first = students[0]
        run_import_torch(pages[first], hub, first)
        time.sleep(SETTLE_SECONDS)
        procs = processes()
        kernels = [p for p in tree(server_pid(first, procs), procs) if "ipykernel_launcher" in procs[p][2]]
        assert len(kernels) == 1, f"expected one kernel of {first}, found {kernels}"
        kernel = memory_mib(tree(kernels[0], procs))

    print(f"\n{'process':<44}{'PSS MiB':>9}{'RSS MiB':>9}")
    for name, (pss, rss) in servers.items():
        print(f"{'idle server of ' + name:<44}{pss:>9.0f}{rss:>9.0f}")
    print(f"{'kernel of ' + first + ' after import torch':<44}{kernel[0]:>9.0f}{kernel[1]:>9.0f}")
    idle = statistics.median(pss for pss, _ in servers.values())
    with_kernel = idle + kernel[0]
    total = total_memory_gib()
    print(f"median idle server: {idle:.0f} MiB PSS ({len(servers)} servers)")
    print(f"one idle student server: {idle:.0f} MiB; with one kernel that imported torch: {with_kernel:.0f} MiB; "
          f"this machine ({total:.1f} GiB, total memory from /proc/meminfo) holds about "
          f"{int(total * 1024 // idle)} idle servers or {int(total * 1024 // with_kernel)} students with a kernel each")


if __name__ == "__main__":
    main()
