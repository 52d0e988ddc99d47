"""Install packages into the running Python (the course's .venv) without their dependencies, fast.

    .venv/bin/python -m grader.install -r requirements.lock
    .venv/bin/python -m grader.install -e .

It means `pip install --no-deps ARGS`, done by uv: uv unpacks wheels in parallel and installs the
lock (5.5 GB, most of it torch's CUDA libraries) in about 26 s where pip takes 125 s on 2 cores.
uv does not read pip's configuration, so the package sources pip is set up with (a local mirror,
a find-links folder, a CA bundle: `pip config list`) are handed over to it, with pip's rule of
taking the best match from all of them. Where uv cannot be installed, pip does the work.
Packages are byte-compiled at install, as pip does: a kernel behind the wall cannot write
__pycache__, and without it each one compiles torch's Python source again (2 s more per import).
Standard library only: this runs before anything else is installed.
"""
import os
import shlex
import subprocess
import sys

UV = "uv==0.13.9"
# pip's options that say where packages come from -> uv's
SOURCES = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links"}


def _pip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                          check=check, capture_output=True, text=True)


def pip_config() -> dict:
    """{option: [values]} from pip's configuration files and PIP_* variables (`pip config list`)."""
    config = {}
    for line in _pip("config", "list", check=False).stdout.splitlines():
        name, _, value = line.partition("=")
        option = name.rsplit(".", 1)[-1]       # global.find-links, :env:.find-links -> find-links
        for item in shlex.split(value.strip("'\"")):
            config.setdefault(option, [])
            if item not in config[option]:
                config[option].append(item)
    return config


def uv_options(config: dict) -> list:
    """uv's options for the package sources in pip's `config`."""
    options = [flag_value for option, flag in SOURCES.items()
               for value in config.get(option, []) for flag_value in (flag, value)]
    if "extra-index-url" in config or "find-links" in config:
        options += ["--index-strategy", "unsafe-best-match"]   # pip compares versions across sources
    return options


def _has_uv() -> bool:
    """Whether this Python has UV already (each call of `pip install` costs about 1 CPU-s even then;
    `make setup` and `make hub` install twice in a row)."""
    from importlib import metadata
    try:
        return metadata.version("uv") == UV.partition("==")[2]
    except metadata.PackageNotFoundError:
        return False


def install(args: list, compile_bytecode: bool = True) -> None:
    """pip install --no-deps ARGS, by uv where it can be installed, else by pip. compile_bytecode
    False: the caller brings the bytecode (make hub links the course's, grader/hub/deploy.py)."""
    if not _has_uv() and _pip("install", "-q", UV, check=False).returncode != 0:
        print(f"{UV} could not be installed: pip installs the packages (slower)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *args], check=True)
        return
    config = pip_config()
    env = dict(os.environ, UV_NO_PROGRESS="1")
    if config.get("cert"):
        env.setdefault("SSL_CERT_FILE", config["cert"][0])
    subprocess.run([sys.executable, "-m", "uv", "pip", "install", "--quiet", "--python", sys.executable,
                    "--no-deps", *(["--compile-bytecode"] if compile_bytecode else []), *uv_options(config), *args],
                   check=True, env=env)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit("usage: python -m grader.install [--no-compile] -r requirements.lock  |  python -m grader.install -e .")
    install([a for a in args if a != "--no-compile"], compile_bytecode="--no-compile" not in args)
