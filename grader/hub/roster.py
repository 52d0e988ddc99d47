"""The class roster: who may log in to the hub, and as what.

One person per line, `role name`, where role is `instructor` or `student` and name is the
person's Unix user name on the server (`make hub` creates it). `#` starts a comment:

    instructor  teacher
    student     ada      # Ada Lovelace
"""
import re
from dataclasses import dataclass
from pathlib import Path

ROLES = ("instructor", "student")
# What useradd accepts on Debian without --badname, minus names that would be confused with options.
NAME = re.compile(r"[a-z_][a-z0-9_-]{0,31}")


class RosterError(ValueError):
    """The roster cannot be used as written: the message names the file, the line and why."""


@dataclass(frozen=True)
class Person:
    name: str
    role: str

    @property
    def instructor(self) -> bool:
        return self.role == "instructor"


def read_roster(path: Path) -> list:
    """The roster's people, in file order. Raises RosterError on the first line it cannot use."""
    people, seen = [], {}
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        where = f"{path}, line {number}"
        if len(fields) != 2:
            raise RosterError(f"{where}: expected `role name`, got {line.strip()!r}")
        role, name = fields
        if role not in ROLES:
            raise RosterError(f"{where}: the role must be one of {', '.join(ROLES)}, not {role!r}")
        if not NAME.fullmatch(name):
            raise RosterError(f"{where}: {name!r} is not a Unix user name (lower-case letters, digits, "
                              "_ and -, starting with a letter or _, at most 32 characters)")
        if name in seen:
            raise RosterError(f"{where}: {name} is already on line {seen[name]}")
        seen[name] = number
        people.append(Person(name, role))
    if not any(p.instructor for p in people):
        raise RosterError(f"{path}: no instructor: someone must be able to release and grade")
    return people
