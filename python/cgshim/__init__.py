"""cgshim for Python users (issue 34).

    python -m cgshim [launcher options] -- cmd args...    # the launcher, as `cgshim`
    pytest -p cgshim ...                                   # the pytest plugin
    cgshim -- pytest -p cgshim ...                         # the same, the pytest process preloaded by the launcher

The plugin (cgshim.plugin) labels each test, fails (or marks) a test during
which an error-level finding was recorded in its process or its children,
takes a baseline and writes JUnit/SARIF: docs/ci.md.
"""
import sys

from ._paths import launcher, library  # noqa: F401

# `pytest -p cgshim` imports this module as the plugin: its hooks are the
# plugin's. `python -m cgshim` does not need pytest, and does not import it.
if "pytest" in sys.modules or "_pytest" in sys.modules:
    from .plugin import *  # noqa: F401,F403
