"""A broken block of each spelling fails the snippet check; so do skips, stray examples and unknown languages.

Each test writes a scratch document with one working block and one block of
the spelling under test, and runs the check of ``tests/docs/test_snippets.py`` on
it; the control shows the same document with the block intact passes and
counts both blocks.
"""

import textwrap

import pytest
import snippets

SETUP = {".rst": ".. code-block:: python\n\n   value = 2\n", ".md": "```python\nvalue = 2\n```\n"}

# Spelling -> (suffix, block template). {code} is code that uses ``value``, {doctest} a doctest that does.
SPELLINGS = {
    "rst code-block python": (".rst", ".. code-block:: python\n\n{code_indented}"),
    "rst code-block py": (".rst", ".. code-block:: py\n\n{code_indented}"),
    "rst code-block python3": (".rst", ".. code-block:: python3\n\n{code_indented}"),
    "rst code-block ipython3": (".rst", ".. code-block:: ipython3\n\n{code_indented}"),
    "rst code-block pycon": (".rst", ".. code-block:: pycon\n\n{doctest_indented}"),
    "rst code, no language": (".rst", ".. code::\n\n{code_indented}"),
    "rst sourcecode with an option": (".rst", ".. sourcecode:: python\n   :caption: A caption\n\n{code_indented}"),
    "rst doctest directive": (".rst", ".. doctest::\n\n{doctest_indented}"),
    "rst testcode directive": (".rst", ".. testcode::\n\n{code_indented}"),
    "rst literal block": (".rst", "An example::\n\n{doctest_indented}"),
    "rst bare literal block": (".rst", "An example:\n\n::\n\n{doctest_indented}"),
    "rst doctest paragraph": (".rst", "{doctest}"),
    "md python": (".md", "```python\n{code}```\n"),
    "md py": (".md", "```py\n{code}```\n"),
    "md python3": (".md", "```python3\n{code}```\n"),
    "md pycon": (".md", "```pycon\n{doctest}```\n"),
    "md tildes": (".md", "~~~python\n{code}~~~\n"),
    "md fence without language": (".md", "```\n{doctest}```\n"),
    "myst code-cell ipython3": (".md", "```{{code-cell}} ipython3\n{code}```\n"),
    "myst code-block with an option": (".md", "```{{code-block}} python\n:caption: A caption\n\n{code}```\n"),
    "myst doctest": (".md", "```{{doctest}}\n{doctest}```\n"),
}


def document(tmp_path, spelling, code, doctest):
    suffix, template = SPELLINGS[spelling]
    block = template.format(
        code=code,
        code_indented=textwrap.indent(code, "   "),
        doctest=doctest,
        doctest_indented=textwrap.indent(doctest, "   "),
    )
    path = tmp_path / f"page{suffix}"
    path.write_text(f"Title\n=====\n\n{SETUP[suffix]}\nText.\n\n{block}\nMore text.\n")
    return path


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_working_block_runs_and_counts(tmp_path, spelling):
    path = document(tmp_path, spelling, "assert value == 2\n", ">>> value + 1\n3\n")
    assert len(snippets.check(path)) == 2


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_broken_block_fails(tmp_path, spelling):
    path = document(tmp_path, spelling, 'raise ValueError("this block is broken")\n', ">>> value + 1\n4\n")
    with pytest.raises(Exception) as failure:
        snippets.check(path)
    assert "this block is broken" in str(failure.value) or "Expected:\n    4\nGot:\n    3" in str(failure.value)


@pytest.mark.parametrize("spelling", ["rst code-block pycon", "md pycon", "rst literal block", "myst doctest"])
def test_skipped_example_fails(tmp_path, spelling):
    path = document(tmp_path, spelling, "", ">>> value + 1  # doctest: +SKIP\n4\n")
    with pytest.raises(AssertionError, match="skips an example"):
        snippets.check(path)


def test_block_that_runs_nothing_fails(tmp_path):
    path = document(tmp_path, "md pycon", "", ">>> # nothing to run\n")
    with pytest.raises(AssertionError, match="ran nothing"):
        snippets.check(path)


def test_example_outside_any_block_fails(tmp_path):
    path = tmp_path / "page.md"
    path.write_text("# Title\n\nText.\n\n    >>> 1 + 1\n    3\n")
    with pytest.raises(AssertionError, match="no parser runs"):
        snippets.check(path)


@pytest.mark.parametrize(
    "suffix, block", [(".md", "```pyodide\nx = 1\n```\n"), (".rst", ".. code-block:: jupyter\n\n   x = 1\n")]
)
def test_unknown_language_fails(tmp_path, suffix, block):
    path = tmp_path / f"page{suffix}"
    path.write_text(f"Title\n=====\n\n{block}")
    with pytest.raises(AssertionError, match="language neither run nor listed"):
        snippets.check(path)


def test_shown_only_blocks_do_not_count(tmp_path):
    path = tmp_path / "page.md"
    path.write_text("# Title\n\n```sh\nmake html\n```\n\n```cpp\nint x;\n```\n\n```python\nx = 1\n```\n")
    assert [block.language for block in snippets.check(path)] == ["python"]
