"""Running code in a fresh interpreter, for the pages that need one (not a page itself).

A process has one PrivateUse1 backend, registered once, and the pages run in
the build's process, where ``backend_pkg`` has registered ``npy``: what
happens before the import, with another backend, or when a process dies is
shown by running that code in a new interpreter. Every page that does uses
:func:`run_code` or :func:`run_module`, so that each spawns it the same way:
this interpreter, unbuffered output (a process that aborts keeps what it
printed), both streams captured as text. Pages import it as
``from _fresh_python import ...``: conf.py puts ``gallery/`` on ``sys.path``.
"""

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

# The checkout backend_pkg is installed from (found without importing it), where minimal/ lives.
CHECKOUT = Path(importlib.util.find_spec("backend_pkg").origin).resolve().parents[1]


def run_code(code, *args, check=False, in_checkout=False, timeout=None):
    """``python -c code args...`` (``code`` dedented): the finished process, its output as text.

    ``check`` raises on a non-zero exit; ``in_checkout`` runs it in :data:`CHECKOUT`, so that
    ``import minimal`` finds the template.
    """
    return _run(["-c", textwrap.dedent(code), *args], check=check, in_checkout=in_checkout, timeout=timeout)


def run_module(module, *args, check=True, timeout=None):
    """``python -m module args...`` in :data:`CHECKOUT` (``minimal.checks``...): the finished process."""
    return _run(["-m", module, *args], check=check, in_checkout=True, timeout=timeout)


def _run(arguments, *, check, in_checkout, timeout):
    return subprocess.run(
        [sys.executable, "-u", *arguments],
        capture_output=True,
        text=True,
        check=check,
        cwd=CHECKOUT if in_checkout else None,
        timeout=timeout,
    )
