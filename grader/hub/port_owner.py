"""Who listens on a TCP port: the person's own server, or someone else's process.

A person's JupyterLab listens on a port the hub picked on 127.0.0.1, and the proxy sends that
person's requests (their cookies with them) to whatever listens there. Any user of the server can
bind a free port: a classmate's process that took it first would receive them. So the spawner
(grader/hub/spawner.py) waits, after each start, until the port is held by a process of the person's
own groups, and refuses the start if another process holds it. docs/GRADING.md, "A class on one
server"."""
import os
import random
import socket
import struct
from pathlib import Path

LISTEN = "0A"   # the state column of /proc/net/tcp for a listening socket
UNPRIVILEGED_START = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def first_unprivileged_port() -> int:
    """The lowest port any user may bind; below it only root can (1024 unless a container lowered it)."""
    try:
        return int(UNPRIVILEGED_START.read_text())
    except (OSError, ValueError):
        return 1024


def unclaimed_ports(count: int = 1) -> int:
    """A port p with p to p+count-1 free on 127.0.0.1, below the range Linux hands out for port 0
    (ip_local_port_range). JupyterHub's own choice binds port 0, and so picks from the range every
    kernel's ZMQ sockets and every outgoing connection are given: a class of 30 starting at once once
    had a server's port taken by another process before the server bound it. Below the range only a
    process that asks for that very port gets it, and the spawner refuses a start whose port it is."""
    try:
        low = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    floor = max(first_unprivileged_port(), 10_000)
    candidates = range(floor, low - count) if low - count > floor else range(1024, 65536 - count)
    for _ in range(200):
        port = random.choice(candidates)
        if all(free(port + i) for i in range(count)):
            return port
    raise OSError(f"no {count} free ports in a row below {low}")


def free(port: int) -> bool:
    """Whether this process could bind `port` on 127.0.0.1 now."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def listening_inodes(port: int, proc: Path = Path("/proc")) -> set:
    """The inodes of the sockets that listen on `port`, on any address (IPv4 and IPv6): asked of the
    kernel's socket diagnostics (netlink), where /proc's tables are the fallback."""
    try:
        return _diag_listening(port)
    except OSError:          # no NETLINK_SOCK_DIAG here (an old or locked-down kernel)
        return _proc_listening(port, proc)


def _proc_listening(port: int, proc: Path = Path("/proc")) -> set:
    found = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == LISTEN and int(local.rsplit(":", 1)[1], 16) == port:
                found.add(int(inode))
    return found


# Linux's sock_diag (linux/sock_diag.h, linux/inet_diag.h). Reading /proc/net/tcp makes the kernel walk
# every bucket of its connection table (about 10 ms of CPU per read of tcp and tcp6 on the test machine,
# however few sockets there are): the spawner's check of 30 starting servers made that two thirds of the
# hub's CPU while a class logged in. A dump of the listening sockets only walks the listening table.
NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY = 4, 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
TCP_LISTEN = 10
_HEADER = struct.Struct("=IHHII")                 # nlmsghdr
_REQUEST = struct.Struct("=BBBBI48s")            # inet_diag_req_v2: family, protocol, ext, pad, states, id
_MESSAGE = struct.Struct("=BBBB2s46sIIIII")      # inet_diag_msg: ..., id (sport first), expires, rqueue, wqueue, uid, inode


def _diag_listening(port: int) -> set:
    found = set()
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as diag:
        for seq, family in enumerate((socket.AF_INET, socket.AF_INET6), start=1):
            body = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, 1 << TCP_LISTEN, bytes(48))
            diag.send(_HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP,
                                   seq, 0) + body)
            done = False
            while not done:
                data = diag.recv(65536)
                offset = 0
                while offset + _HEADER.size <= len(data):
                    length, kind, _, got_seq, _ = _HEADER.unpack_from(data, offset)
                    if length < _HEADER.size:
                        raise OSError("a malformed sock_diag answer")
                    if kind == NLMSG_DONE and got_seq == seq:
                        done = True
                    elif kind == NLMSG_ERROR:
                        code = -struct.unpack_from("=i", data, offset + _HEADER.size)[0]
                        raise OSError(code, f"sock_diag: {os.strerror(code)}")
                    elif kind == SOCK_DIAG_BY_FAMILY and got_seq == seq:
                        fields = _MESSAGE.unpack_from(data, offset + _HEADER.size)
                        state, sport, inode = fields[1], int.from_bytes(fields[4], "big"), fields[-1]
                        if state == TCP_LISTEN and sport == port:
                            found.add(inode)
                    offset += (length + 3) & ~3
    return found


def socket_inodes(pids, proc: Path = Path("/proc")) -> set:
    """The inodes of the sockets that the processes `pids` have open."""
    found = set()
    for pid in pids:
        try:
            fds = os.listdir(proc / str(pid) / "fd")
        except OSError:      # gone, or not ours to read
            continue
        for fd in fds:
            try:
                target = os.readlink(proc / str(pid) / "fd" / fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                found.add(int(target[len("socket:["):-1]))
    return found


def holder(port: int, pids) -> str | None:
    """"theirs" when a socket of `pids` listens on `port`, "foreign" when only others' do, None when
    nobody listens there (yet)."""
    listening = listening_inodes(port)
    if not listening:
        return None
    return "theirs" if listening & socket_inodes(pids) else "foreign"
