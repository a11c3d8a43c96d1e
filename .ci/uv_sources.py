"""Print the `uv pip install` arguments that make uv read packages from where pip is configured to.

uv installs the test environment in seconds where pip takes minutes (it unpacks in parallel and compiles no
bytecode), but it does not read pip's configuration. This turns what `pip config list` says (index URLs, extra
index URLs, find-links, constraints) into uv's flags, so both tools see the same packages: on a machine whose pip
is pointed at local wheels and mirrors, uv uses them too. With no pip configuration it prints nothing (PyPI).

Usage (the Makefile does this): uv pip install $(python .ci/uv_sources.py) -e '.[dev]'
"""

from __future__ import annotations

import shlex
import subprocess
import sys


def pip_config() -> dict[str, str]:
    """pip's settings as `pip config list` prints them (``global.find-links='...'``), environment ones included,
    keyed by setting name; a global setting wins over a user or environment one of the same name."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    settings: dict[str, str] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        scope, _, name = key.rpartition(".")
        value = value.strip().strip("'\"")
        if scope == "global" or name not in settings:
            settings[name] = value
    return settings


def uv_arguments(settings: dict[str, str]) -> list[str]:
    args: list[str] = []
    if "index-url" in settings:
        args += ["--index-url", settings["index-url"]]
    extras = settings.get("extra-index-url", "").split()
    for url in extras:
        args += ["--extra-index-url", url]
    if extras:  # pip takes the best version across all its indexes; uv, by default, the first index that has any
        args += ["--index-strategy", "unsafe-best-match"]
    for place in settings.get("find-links", "").split():
        args += ["--find-links", place]
    for path in settings.get("constraint", "").split():
        args += ["--constraint", path]
    return args


if __name__ == "__main__":
    print(shlex.join(uv_arguments(pip_config())))
