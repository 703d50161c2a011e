import pytest
import torch
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
    """The executed site, built once per test session from a copy of the sources."""
    work = copy_sources(tmp_path_factory.mktemp("site"))
    result = build(work)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return work / "_build" / "html"


def pytest_collection_modifyitems(items):
    """Keep what a worker builds once on one worker when ``make test`` runs ``pytest -n``.

    ``--dist loadgroup`` sends each group to a single worker: a module's tests share its
    module-scoped fixtures, and every test that reads the executed site shares the one build.
    """
    for item in items:
        group = "built_site" if "built_site" in item.fixturenames else item.module.__name__
        item.add_marker(pytest.mark.xdist_group(group))
