"""Every executable block of the written docs runs, whatever its spelling.

Blocks in ``source/`` (reStructuredText and MyST) and in the README run in
order, one namespace per document (``tests/snippets.py`` finds them and runs
them with Sybil). A block that shows a failure is written as a doctest whose
expected output is the traceback, so the doctest asserts the failure. A
document fails when one of its executable blocks ran nothing, skips an
example, or when it holds a ``>>>`` example or a code block in a language
the finder does not know; ``tests/docs/test_snippet_breaks.py`` shows each.
"""

import pytest
import snippets
from sitebuild import ROOT

DOCUMENTS = sorted(ROOT.glob("source/**/*.rst")) + sorted(ROOT.glob("source/**/*.md")) + [ROOT / "README.md"]
DOCUMENTS = [path for path in DOCUMENTS if "auto_examples" not in path.parts and path.name != "sg_execution_times.rst"]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_block_runs(path):
    snippets.check(path)


def test_the_documents_blocks_are_found():
    counts = {path.name: len(snippets.check(path)) for path in (ROOT / "source" / "quickstart.md", ROOT / "README.md")}
    assert counts["quickstart.md"] >= 5 and counts["README.md"] >= 2, counts
