"""How ``make test`` (``pytest -n 2 --dist loadgroup``) shares the tests between its workers.

xdist's own loadgroup scheduler learns each test's ``xdist_group`` by appending
the group to the test's node id, which pytest 9.2 no longer lets a plugin change
(pytest-dev/pytest-xdist#1386): the marks are silently ignored, every test is a
unit of its own, and a module-scoped fixture (the OpInfo run, the quick bench,
the gradchecks) runs once on each worker. This scheduler groups by module from
the node id alone, and hands out the longest units first so that the workers
finish together: the last units are the many short modules.
"""

from xdist.scheduler import LoadScopeScheduling

# Modules whose tests each run their own processes and share no module-scoped
# fixture: each test is a unit, so both workers take some of them.
ONE_UNIT_PER_TEST = ("tests/docs/test_notebooks.py", "tests/docs/test_docs.py")

# The longest units, longest first. Their times: the executed site build that
# test_browser starts, ~100 s in a whole `make test`; the others in CPU
# seconds, each module run alone (user + sys): the compile tests ~55, the
# OpInfo run ~35, the quick bench ~30 (~50 s in a whole `make test`), the
# build breaks ~30, the gradchecks ~25, the error inputs ~12; the gallery's
# notebooks and scripts 3 to 35 s each. The site build goes to the first
# worker and the compile tests, then the bench, to the second; the site's
# readers come after enough other work that the build is done when they start.
LONGEST_FIRST = (
    "tests/docs/test_browser.py",
    "tests/compile/test_compile.py",
    "tests/tools/test_bench.py",
    "tests/tools/test_opinfo.py",
    "tests/docs/test_build_breaks.py",
    "tests/tools/test_gradcheck.py",
    "tests/docs/test_notebooks.py::test_downloaded_notebook_runs[06_compiling_with_inductor",
    "tests/docs/test_notebooks.py::test_downloaded_notebook_runs[09_real_models",
    "tests/docs/test_notebooks.py",
    "tests/docs/test_docs.py",
    "tests/tools/test_error_inputs.py",
)


class ModuleScheduling(LoadScopeScheduling):
    """A module's tests on one worker; the units named in :data:`LONGEST_FIRST` handed out first."""

    def _split_scope(self, nodeid):
        module = nodeid.split("::", 1)[0]
        return nodeid if module in ONE_UNIT_PER_TEST else module

    def _assign_work_unit(self, node):
        for prefix in LONGEST_FIRST:
            scope = next((scope for scope in self.workqueue if scope.startswith(prefix)), None)
            if scope is not None:
                self.workqueue.move_to_end(scope, last=False)
                break
        super()._assign_work_unit(node)
