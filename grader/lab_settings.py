"""JupyterLab's defaults for the course, in a Python environment's own JupyterLab settings.

    python -m grader.lab_settings [PREFIX]      # `make setup`: this .venv; a JupyterHub's environment: its prefix

`<prefix>/share/jupyter/lab/settings/overrides.json` replaces the settings' defaults for every lab
that environment starts (make lab, make instructor-lab, a hub's single-user servers); a setting a
user changes still wins.
"""
import json
import sys
from pathlib import Path

# plugin id -> {setting: value}, as in the plugin's schema (share/jupyter/lab/schemas/<plugin>.json)
OVERRIDES = {
    # no "Would you like to get notified about official Jupyter news?" in every fresh lab, and no
    # request to jupyter.org; the schema's values are strings: "true", "false", "none" (= ask)
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"},
}


def overrides_file(prefix: Path) -> Path:
    return Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"


def install_overrides(prefix: Path = Path(sys.prefix)) -> Path:
    """Merge OVERRIDES into the environment's overrides.json, keeping every other entry there."""
    path = overrides_file(prefix)
    overrides = json.loads(path.read_text()) if path.exists() else {}
    for plugin, settings in OVERRIDES.items():
        overrides.setdefault(plugin, {}).update(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(overrides, indent=2) + "\n")
    return path


if __name__ == "__main__":
    print(f"JupyterLab's defaults for the course: {install_overrides(*sys.argv[1:2])}")
