"""The minimal Python backend and its C++ twin pass the same core checks (minimal/checks.py).

Each runs in a process of its own: a process has one PrivateUse1 backend, and
this one has npy. The twin's first build takes about a minute on two busy cores;
later runs load it from _build/.
"""

import ast
import json
import subprocess
import sys

import pytest
from sitebuild import ROOT

from minimal.checks import CHECKS, OWN_CHECKS

BUILD_TIMEOUT = 600
# minimal/checks.py runs 50 scripts that end in backward() by default; 20 keep the test able to fail (the
# template with its backward on PyTorch's device thread aborted 8 of 20, so 0 of 20 by chance is about 4e-5)
# at 40% of the time.
EXIT_RUNS = 20


@pytest.mark.parametrize("backend", ["python", "cpp"])
def test_core_checks(backend):
    result = subprocess.run(
        [sys.executable, "-m", "minimal.checks", backend, "--exit-runs", str(EXIT_RUNS)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    checks = CHECKS + OWN_CHECKS[backend]
    assert result.stdout.split() == [word for check in checks for word in (f"{check.__name__}:", "ok")]


def test_python_backend_is_one_small_file_of_its_own():
    source = (ROOT / "minimal" / "python_backend.py").read_text()
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])
    }
    assert imported - set(sys.stdlib_module_names) == {"numpy", "torch"}
    tree = ast.parse(source)
    docstrings = {
        line
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node)
        for line in range(node.body[0].lineno, node.body[0].end_lineno + 1)
    }
    code = [
        line
        for number, line in enumerate(source.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#") and number not in docstrings
    ]
    assert len(code) <= 151, "the template is read in one sitting: about 150 lines of code, docstrings aside"


def test_twin_has_two_devices_timed_events_and_runs_aot_eager():
    """What page 07's C++ column shows, from minimal/facts.py run on the twin."""
    result = subprocess.run(
        [sys.executable, "-m", "minimal.facts", "cpp"], capture_output=True, text=True, timeout=BUILD_TIMEOUT, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-3000:]
    facts = json.loads(result.stdout)
    assert facts["devices"] == {
        "device_count()": 2,
        "a tensor on index 1": "twin:1",
        "set_device_index(1)": "current index is then 1",
    }
    events = facts["streams and events"]
    assert events["Event.synchronize()"] == events["accelerator.synchronize()"] == "returns"
    assert float(events["Event.elapsed_time()"].removesuffix(" ms")) > 0
    assert facts["torch.compile"]['backend="aot_eager"'] == "runs, result on twin:0, equal to eager"
    assert facts["kernels"]["torch.lgamma, which has none"] == "runs, result on twin:0, equal to CPU"
