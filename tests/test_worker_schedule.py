"""How ``make test`` shares the tests between its workers (tests/worker_schedule.py)."""

from collections import OrderedDict

from sitebuild import ROOT
from worker_schedule import LONGEST_FIRST, ONE_UNIT_PER_TEST, ModuleScheduling
from xdist.scheduler import LoadScopeScheduling


def test_a_module_is_one_unit_and_a_notebook_test_its_own():
    split = ModuleScheduling._split_scope
    assert split(None, "tests/ops/test_arithmetic.py::test_add[float32]") == "tests/ops/test_arithmetic.py"
    assert split(None, "tests/ops/test_arithmetic.py::TestViews::test_t") == "tests/ops/test_arithmetic.py"
    notebook = "tests/docs/test_notebooks.py::test_downloaded_notebook_runs[01_quick_setup]"
    assert split(None, notebook) == notebook


def test_the_longest_units_are_handed_out_first(monkeypatch):
    handed_out = []  # xdist's own hand-out takes the unit at the front of the queue
    monkeypatch.setattr(
        LoadScopeScheduling,
        "_assign_work_unit",
        lambda self, node: handed_out.append(self.workqueue.popitem(last=False)[0]),
    )
    scheduler = ModuleScheduling.__new__(ModuleScheduling)
    scheduler.workqueue = OrderedDict.fromkeys(
        [
            "tests/ops/test_arithmetic.py",
            "tests/docs/test_notebooks.py::test_downloaded_notebook_runs[01_why_python_backend]",
            "tests/docs/test_notebooks.py::test_downloaded_notebook_runs[06_compiling_with_inductor]",
            "tests/tools/test_opinfo.py",
            "tests/docs/test_browser.py",
        ]
    )
    for _ in range(5):
        scheduler._assign_work_unit(node=None)
    assert handed_out == [
        "tests/docs/test_browser.py",
        "tests/tools/test_opinfo.py",
        "tests/docs/test_notebooks.py::test_downloaded_notebook_runs[06_compiling_with_inductor]",
        "tests/docs/test_notebooks.py::test_downloaded_notebook_runs[01_why_python_backend]",
        "tests/ops/test_arithmetic.py",
    ]


def test_the_schedule_names_existing_tests():
    """A renamed module or page would silently lose its place in the schedule."""
    for prefix in (*ONE_UNIT_PER_TEST, *LONGEST_FIRST):
        module, _, test = prefix.partition("::")
        assert (ROOT / module).is_file(), prefix
        if test:
            name, _, page = test.partition("[")
            assert f"def {name}(" in (ROOT / module).read_text(), prefix
            assert list((ROOT / "gallery").rglob(f"{page}*.py")), prefix
