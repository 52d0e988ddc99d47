"""The roster and the checks `make hub` makes before it touches the server (seconds, no hub)."""
import os

import pytest

from grader.hub import deploy, unix_users
from grader.hub.roster import Person, RosterError, read_roster


def roster(tmp_path, text):
    path = tmp_path / "roster.txt"
    path.write_text(text)
    return path


def test_the_course_roster_reads_as_one_instructor_and_students():
    from grader.course import REPO_ROOT
    people = read_roster(REPO_ROOT / "hub" / "roster.txt")
    assert [p for p in people if p.instructor] and all(p.role in ("instructor", "student") for p in people)


def test_comments_and_blank_lines_are_skipped(tmp_path):
    people = read_roster(roster(tmp_path, "# the class\n\ninstructor teach   # me\nstudent ada\n"))
    assert people == [Person("teach", "instructor"), Person("ada", "student")]


@pytest.mark.parametrize("text, says", [
    ("instructor teach\nstudent ada extra\n", "line 2: expected `role name`"),
    ("instructor teach\nteacher bob\n", "line 2: the role must be one of"),
    ("instructor teach\nstudent Ada\n", "'Ada' is not a Unix user name"),
    ("instructor teach\nstudent -rf\n", "'-rf' is not a Unix user name"),
    ("instructor teach\nstudent ada\nstudent ada\n", "line 3: ada is already on line 2"),
    ("student ada\n", "no instructor"),
])
def test_a_roster_line_that_cannot_be_used_is_named_with_its_reason(tmp_path, text, says):
    with pytest.raises(RosterError, match=None) as err:
        read_roster(roster(tmp_path, text))
    assert says in str(err.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="creating users needs root")
def test_a_system_account_is_never_taken_over():
    with pytest.raises(unix_users.UserError, match="system account"):
        unix_users.ensure_user("daemon", instructor=False)
    assert "daemon" not in unix_users.members(unix_users.STUDENTS)


def test_make_hub_as_a_normal_user_says_to_run_it_as_root(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(deploy.HubError, match="run it as root"):
        deploy.check_platform()


def test_make_hub_off_linux_says_to_use_make_lab(monkeypatch):
    monkeypatch.setattr(deploy.platform, "system", lambda: "Darwin")
    with pytest.raises(deploy.HubError, match="make lab"):
        deploy.check_platform()


def test_make_hub_refuses_a_home_too_long_for_the_kernels_unix_sockets(monkeypatch):
    """A person's kernels listen on Unix sockets in their runtime folder (deploy.KERNEL_TRANSPORT),
    whose paths hold at most 107 bytes: a home too deep for them is named before anything is written."""
    from types import SimpleNamespace
    home = "/home/" + "h" * 60
    monkeypatch.setattr(deploy.pwd, "getpwnam", lambda name: SimpleNamespace(pw_dir=home, pw_uid=os.getuid()))
    with pytest.raises(deploy.HubError, match=f"s1's home {home} is too long a path"):
        deploy.configure_homes([Person("s1", "student")], layout=None)
    short = "/home/" + "h" * 32      # the longest user name, in /home
    monkeypatch.setattr(deploy.pwd, "getpwnam", lambda name: SimpleNamespace(pw_dir=short, pw_uid=os.getuid()))
    monkeypatch.setattr(deploy, "_write", lambda *args: None)
    deploy.configure_homes([Person("s1", "student")], layout=None)   # passes (and writes nothing here)
