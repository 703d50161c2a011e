"""tools/record_compatibility.py counts the docs tests (the modules under tests/docs/) apart from the rest."""

import sys

from sitebuild import ROOT

sys.path.insert(0, str(ROOT / "tools"))

from record_compatibility import counts  # noqa: E402

JUNIT = """<testsuites><testsuite>
<testcase classname="tests.docs.test_docs" name="test_a"/>
<testcase classname="tests.docs.test_api_names.TestNames" name="test_b"><failure message="no"/></testcase>
<testcase classname="tests.docs.test_browser" name="test_c"><skipped message="no chromium"/></testcase>
<testcase classname="tests.ops.test_docs_like" name="test_d"/>
<testcase classname="tests.core.test_device" name="test_e"><error message="import"/></testcase>
<testcase classname="tests.test_imports" name="test_f"/>
</testsuite></testsuites>
"""


def test_docs_tests_are_the_modules_under_tests_docs(tmp_path):
    junit = tmp_path / "run.xml"
    junit.write_text(JUNIT)
    tally, skipped = counts(junit)
    assert tally == {"docs": [1, 2], "backend": [2, 3]}
    assert skipped == 1
