"""The roster's people as Unix users: each gets a user, a private home and one of the course's two
groups. The hub starts each person's JupyterLab as their user, so the kernel's file permissions are
what keeps students out of each other's homes and out of the course directory."""
import grp
import os
import pwd
import secrets
import subprocess

from grader.course import COURSE_ID
from grader.hub import home_disks

INSTRUCTORS = f"{COURSE_ID}-instructors"
STUDENTS = f"{COURSE_ID}-students"
FIRST_PERSON_UID = 1000    # below: system accounts, which the hub never takes over


class UserError(RuntimeError):
    """A roster name that cannot become a course user (for example a system account)."""


def _run(*cmd: str, stdin: str | None = None) -> None:
    proc = subprocess.run(cmd, input=stdin, text=True, capture_output=True)
    if proc.returncode != 0:
        raise UserError(f"{' '.join(cmd[:2])} ... failed: {proc.stderr.strip()}")


def exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def ensure_group(name: str) -> int:
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        _run("groupadd", name)
        return grp.getgrnam(name).gr_gid


def members(group: str) -> set:
    try:
        return set(grp.getgrnam(group).gr_mem)
    except KeyError:
        return set()


def ensure_user(name: str, instructor: bool) -> str | None:
    """Create `name` (home 0700) in its role's group, or move an existing person user into it.
    Returns the new user's initial password, None for a user that existed already."""
    group, other = (INSTRUCTORS, STUDENTS) if instructor else (STUDENTS, INSTRUCTORS)
    password = None
    if exists(name):
        if pwd.getpwnam(name).pw_uid < FIRST_PERSON_UID:
            raise UserError(f"{name} is a system account on this server (uid below {FIRST_PERSON_UID}): "
                            "choose another name in the roster")
        if name in members(other):
            _run("gpasswd", "-d", name, other)
        _run("usermod", "-a", "-G", group, name)
    else:
        _run("useradd", "--create-home", "--shell", "/bin/bash", "--groups", group, name)
        password = secrets.token_urlsafe(12)
        _run("chpasswd", stdin=f"{name}:{password}\n")
    os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
    return password


def remove_user(name: str) -> None:
    """Remove a user and its home (tests clean up after themselves with this)."""
    if exists(name):
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
        home_disks.release(name)     # its own filesystem, if it has one: userdel would empty it, not unmount it
        _run("userdel", "--remove", name)
