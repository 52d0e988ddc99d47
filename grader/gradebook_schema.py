"""The gradebook schema's version, read in this process.

nbgrader stamps every gradebook it creates with the version of its schema, and asks for it by
running `alembic heads`: a Python process of its own, 1.3 CPU-s, for each new gradebook (each
batch's scratch course, each merge, each test course: 27 of them in one `make test`). The answer
depends only on the installed nbgrader: read from nbgrader's own migration scripts, here, with
alembic's API, it is the same version for 0.12 CPU-s the first time (alembic's import) and nothing after.
"""
import functools


@functools.cache
def alembic_head() -> str:
    """What `alembic heads` says nbgrader's newest migration is (nbgrader.api.get_alembic_version)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:   # nbgrader's own ini, as it writes it
        return ScriptDirectory.from_config(Config(ini)).get_current_head()


def install() -> None:
    """nbgrader creates gradebooks with alembic_head from now on, in this process."""
    import nbgrader.api
    nbgrader.api.get_alembic_version = alembic_head
