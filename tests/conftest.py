import gc
import json
import os
import subprocess

import pytest
import torch
from filelock import FileLock
from reference import DTYPES
from sitebuild import build, copy_sources


@pytest.fixture(params=DTYPES, ids=str)
def dtype(request):
    return request.param


@pytest.fixture
def strict(monkeypatch):
    """No CPU fallback: an op without an npy kernel raises instead of running on CPU."""
    monkeypatch.setenv("BACKEND_PKG_STRICT", "1")


@pytest.fixture
def warn_always():
    """Every ``TORCH_WARN_ONCE`` warning warns, whichever test used it up before."""
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    yield
    torch.set_warn_always(previous)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory):
    """The executed site, built once per test run from a copy of the sources.

    Under ``pytest -n`` the workers share one build: the first to need it builds
    it while any other waits on the lock, and every worker checks the same outcome.
    """
    run = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        run = run.parent  # the workers' temporary directories are in the run's
    outcome_file = run / "site-build.json"
    with FileLock(run / "site-build.lock"):
        if not outcome_file.exists():
            # Written first: a build that raises is not tried again by another worker.
            outcome_file.write_text(json.dumps({"returncode": None, "log": "the first worker's build raised"}))
            (run / "site").mkdir()
            outcome_file.write_text(json.dumps(site_build_outcome(copy_sources(run / "site"))))
    outcome = json.loads(outcome_file.read_text())
    assert outcome["returncode"] == 0, outcome["log"]
    return run / "site" / "_build" / "html"


def site_build_outcome(work):
    """The return code of the build of ``work`` (None when it timed out) and the end of its log."""
    try:
        result = build(work)
    except subprocess.TimeoutExpired as timeout:  # recorded too: a failed build is not tried again
        return {"returncode": None, "log": str(timeout)}
    return {"returncode": result.returncode, "log": result.stdout[-3000:] + result.stderr[-3000:]}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` (``make test``): a module's tests on one worker, the longest modules first."""
    if config.getvalue("dist") == "loadgroup":
        from worker_schedule import ModuleScheduling

        return ModuleScheduling(config, log)
    return None


@pytest.fixture
def no_collection():
    """Exact byte counts: earlier tests' garbage collected now, none collected during the test."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()
