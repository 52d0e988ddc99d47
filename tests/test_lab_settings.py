"""JupyterLab's defaults for the course (grader/lab_settings.py); tests/test_browser.py checks a real lab."""
import json
import sys
from pathlib import Path

import jsonschema

from grader.lab_settings import OVERRIDES, install_overrides, overrides_file

NOTIFICATIONS = "@jupyterlab/apputils-extension:notification"


def test_merges_into_the_overrides_already_there(tmp_path):
    """An environment's overrides.json may hold an administrator's choices: they all stay."""
    theirs = {"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"},
              NOTIFICATIONS: {"doNotDisturbMode": True, "fetchNews": "none"}}
    path = overrides_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(theirs))
    assert install_overrides(tmp_path) == path
    install_overrides(tmp_path)                       # a second `make setup` changes nothing more
    merged = json.loads(path.read_text())
    assert merged["@jupyterlab/apputils-extension:themes"] == theirs["@jupyterlab/apputils-extension:themes"]
    assert merged[NOTIFICATIONS] == {"doNotDisturbMode": True, **OVERRIDES[NOTIFICATIONS]}


def test_writes_a_new_file_in_a_bare_environment(tmp_path):
    assert json.loads(install_overrides(tmp_path).read_text()) == OVERRIDES


def test_every_override_is_a_value_the_installed_jupyterlab_accepts():
    """The plugin, the setting and the value's type as the installed JupyterLab declares them
    (fetchNews is the string "false", not a boolean): an upgrade that renames one fails here."""
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    assert OVERRIDES[NOTIFICATIONS]["fetchNews"] == "false", "the news are no longer turned off"
    for plugin, settings in OVERRIDES.items():
        package, name = plugin.split(":")
        schema = json.loads((schemas / package / f"{name}.json").read_text())
        for setting, value in settings.items():
            jsonschema.validate(value, schema["properties"][setting])
