"""Every Python code block of the written docs runs, through Sybil.

Blocks in ``source/`` (reStructuredText and MyST) and in the README run in
order, one namespace per document. A block that shows a failure is written
as a doctest whose expected output is the traceback, so Sybil asserts the
failure. A second test counts the Python blocks in each file independently
of Sybil, so a block Sybil did not run cannot go unnoticed.
"""

import doctest
import re

import pytest
from sitebuild import ROOT
from sybil import Sybil
from sybil.parsers import myst, rest
from sybil.parsers.abstract.codeblock import PythonDocTestOrCodeBlockParser

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
DOCUMENTS = sorted(ROOT.glob("source/**/*.rst")) + sorted(ROOT.glob("source/**/*.md")) + [ROOT / "README.md"]
DOCUMENTS = [path for path in DOCUMENTS if "auto_examples" not in path.parts and path.name != "sg_execution_times.rst"]



class RestPythonParser(PythonDocTestOrCodeBlockParser):
    """``.. code-block:: python``, run as code, or as a doctest when it starts with ``>>>``."""

    codeblock_parser_class = rest.CodeBlockParser


SYBIL = {
    ".rst": Sybil(parsers=[RestPythonParser(doctest_optionflags=FLAGS)]),
    ".md": Sybil(parsers=[myst.PythonCodeBlockParser(doctest_optionflags=FLAGS)]),
}
PYTHON_BLOCK = {
    ".rst": re.compile(r"^\s*\.\. (code-block|code|sourcecode):: python\s*$", re.MULTILINE),
    ".md": re.compile(r"^```(\{(code-block|code-cell|code|sourcecode)\}\s*)?python\s*$", re.MULTILINE),
}


def examples(path):
    return list(SYBIL[path.suffix].parse(path))


def block_lines(path):
    """Line numbers where the file's Python code blocks start, found without Sybil."""
    text = path.read_text()
    return [text.count("\n", 0, match.start()) + 1 for match in PYTHON_BLOCK[path.suffix].finditer(text)]


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_block_runs(path):
    starts = block_lines(path)
    ran = set()
    for example in examples(path):
        example.evaluate()
        ran.add(max(line for line in starts if line <= example.line))
    assert sorted(ran) == starts, "blocks found in the file but not run by Sybil"


def test_notebook_cells_are_found():
    assert len(block_lines(ROOT / "source" / "quickstart.md")) >= 4
