"""The minimal Python backend and its C++ twin pass the same core checks (minimal/checks.py).

Each runs in a process of its own: a process has one PrivateUse1 backend, and
this one has npy. The twin's first build takes about a minute on two busy cores;
later runs load it from _build/.
"""

import ast
import subprocess
import sys

import pytest
from sitebuild import ROOT

from minimal.checks import CHECKS

BUILD_TIMEOUT = 600


@pytest.mark.parametrize("backend", ["python", "cpp"])
def test_core_checks(backend):
    result = subprocess.run(
        [sys.executable, "-m", "minimal.checks", backend],
        capture_output=True, text=True, timeout=BUILD_TIMEOUT, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == [word for check in CHECKS for word in (f"{check.__name__}:", "ok")]


def test_python_backend_is_one_small_file_of_its_own():
    source = (ROOT / "minimal" / "python_backend.py").read_text()
    imported = {alias.name.split(".")[0] for node in ast.walk(ast.parse(source))
                if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])}
    assert imported == {"numpy", "torch"}
    code = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) <= 110
