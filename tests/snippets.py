"""Every executable block of a written document, found whatever its spelling, and run with Sybil.

A block is executable when it is spelled as Python or when its text starts
with ``>>>``:

* reStructuredText: ``.. code-block::``, ``.. code::`` and ``.. sourcecode::``
  with a Python language (or none: Sphinx highlights those as Python),
  ``.. doctest::`` and ``.. testcode::``, ``::`` literal blocks and bare
  paragraphs that start with ``>>>``;
* Markdown and MyST: fences (backticks or tildes) with a Python language,
  the same as MyST directives (``{code-block}``, ``{code-cell}``, ``{code}``,
  ``{sourcecode}``, ``{doctest}``), and any fence whose text starts with
  ``>>>``.

A block whose text starts with ``>>>`` runs as a doctest, any other as code;
the blocks of one document share one namespace, in order. :func:`check`
fails when a block ran nothing, when a block asks doctest to skip an example,
when a ``>>>`` line is outside every executable block, or when a code block
is spelled in a language this module does not know, so a new spelling
cannot go unnoticed.
"""

import dataclasses
import doctest
import re
import textwrap

from sybil import Region, Sybil
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.evaluators.python import PythonEvaluator
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.region import Lexeme

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
PYTHON = {"python", "py", "python3", "py3", "pycon", "ipython", "ipython3"}
# Languages shown, never run ("": a literal block or a fence that names none); a block in any other
# language fails the check until it is listed here or in PYTHON.
NOT_PYTHON = {
    "",
    "sh",
    "bash",
    "shell",
    "console",
    "text",
    "none",
    "cpp",
    "c++",
    "c",
    "json",
    "yaml",
    "toml",
    "ini",
    "csv",
    "diff",
    "make",
    "makefile",
    "html",
    "javascript",
    "js",
}
SKIP = re.compile(r"doctest:.*[+]SKIP|^\s*(\.\.|<!--)\s*skip:", re.MULTILINE)


@dataclasses.dataclass
class Block:
    spelling: str  # how the document spells it: "code-block:: pycon", "```python", "::", ...
    language: str  # "" when the spelling names none
    start: int  # offset of the block's first character in the document
    end: int
    source: str  # the block's text, dedented
    source_start: int  # offset of the text's first line in the document

    @property
    def executable(self):
        return self.language in PYTHON or self.source.lstrip().startswith(">>>")


RST_DIRECTIVE = re.compile(
    r"^(?P<indent>[ \t]*)\.\. (?P<name>code-block|code|sourcecode|doctest|testcode)::[ \t]*(?P<language>\S*)[^\n]*$",
    re.MULTILINE,
)
RST_LITERAL = re.compile(r"^(?P<indent>[ \t]*)(?!\.\. )\S[^\n]*::[ \t]*$|^(?P<bare>[ \t]*)::[ \t]*$", re.MULTILINE)
MD_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$", re.MULTILINE)
MYST_DIRECTIVE = re.compile(r"\{(?P<name>[\w-]+)\}\s*(?P<language>\S*)")


def _indented_body(text, after, indent):
    """The lines after offset ``after`` indented deeper than ``indent``: (start, end) offsets."""
    position = text.find("\n", after)
    if position < 0:
        return len(text), len(text)
    start = end = position + 1
    for line in re.finditer(r"[^\n]*\n?", text[start:]):
        content = line.group()
        if not content:
            break
        if content.strip() and len(content) - len(content.lstrip()) <= len(indent):
            break
        end = start + line.end()
    return start, end


def _without_options(body, body_start):
    """A directive's body without its leading ``:option:`` lines and blank lines: (text, offset)."""
    match = re.match(r"(?:[ \t]*:[\w-]+:[^\n]*\n|[ \t]*\n)*", body)
    return body[match.end() :], body_start + match.end()


def rst_blocks(text):
    blocks = []
    for match in RST_DIRECTIVE.finditer(text):
        body_start, end = _indented_body(text, match.end(), match.group("indent"))
        body, source_start = _without_options(text[body_start:end], body_start)
        name, language = match.group("name"), match.group("language")
        if name in ("doctest", "testcode"):
            language = "python"
        elif not language:
            language = "python"  # Sphinx highlights a code block without a language as Python
        blocks.append(
            Block(
                f"{name}:: {match.group('language')}".strip(),
                language,
                match.start(),
                end,
                textwrap.dedent(body),
                source_start,
            )
        )
    for match in RST_LITERAL.finditer(text):
        if any(block.start <= match.start() < block.end for block in blocks):
            continue
        indent = match.group("indent") if match.group("indent") is not None else match.group("bare")
        body_start, end = _indented_body(text, match.end(), indent)
        body, source_start = _without_options(text[body_start:end], body_start)
        blocks.append(Block("::", "", match.start(), end, textwrap.dedent(body), source_start))
    for match in re.finditer(r"^[ \t]*>>>", text, re.MULTILINE):
        if any(block.start <= match.start() < block.end for block in blocks):
            continue
        end = text.find("\n\n", match.start())
        end = len(text) if end < 0 else end + 1
        blocks.append(
            Block(
                "doctest paragraph", "", match.start(), end, textwrap.dedent(text[match.start() : end]), match.start()
            )
        )
    return sorted(blocks, key=lambda block: block.start)


def md_blocks(text):
    blocks = []
    position = 0
    while match := MD_FENCE.search(text, position):
        fence, info = match.group("fence"), match.group("info").strip()
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        close = closing.search(text, match.end() + 1)
        end = close.end() if close else len(text)
        body_start = match.end() + 1
        body = text[body_start : close.start() if close else len(text)]
        directive = MYST_DIRECTIVE.match(info)
        if directive:
            name, language = directive.group("name"), directive.group("language")
            body, body_start = _without_options(body, body_start)
            if name == "doctest":
                language = "python"
            elif name not in ("code-block", "code-cell", "code", "sourcecode"):
                language = f"{{{name}}}"
        else:
            language = info.split()[0] if info else ""
        blocks.append(Block(f"{fence[:3]}{info}", language, match.start(), end, textwrap.dedent(body), body_start))
        position = end
    for match in re.finditer(r"^[ \t]*>>>", text, re.MULTILINE):
        if not any(block.start <= match.start() < block.end for block in blocks):
            blocks.append(Block(">>> outside a fence", "", match.start(), match.end(), "", match.start()))
    return sorted(blocks, key=lambda block: block.start)


def find_blocks(text, path):
    """The code blocks of a document, executable or not, in order."""
    return rst_blocks(text) if str(path).endswith(".rst") else md_blocks(text)


class ExecutableBlockParser:
    """A Sybil parser yielding one region per statement of each executable block :func:`find_blocks` finds."""

    def __init__(self):
        self.doctests = DocTestStringParser(DocTestEvaluator(FLAGS))
        self.code = PythonEvaluator()

    def __call__(self, document):
        for block in find_blocks(document.text, document.path):
            if not block.executable:
                continue
            if block.source.lstrip().startswith(">>>"):
                for region in self.doctests(block.source, document.path):
                    # Offsets in the dedented text are no larger than in the document: the region stays in its block.
                    region.start += block.source_start
                    region.end = min(region.end + block.source_start, block.end)
                    yield region
            else:
                # Line offset -1: the evaluator counts from the line before the region's first.
                yield Region(block.source_start, block.end, Lexeme(block.source, 0, -1), self.code)


SYBIL = Sybil(parsers=[ExecutableBlockParser()])


def check(path):
    """Run every executable block of the document at ``path``; fail on what would keep a block from counting."""
    text = path.read_text()
    blocks = find_blocks(text, path)
    for block in blocks:
        where = f"{path.name}, line {text.count(chr(10), 0, block.start) + 1}: {block.spelling!r}"
        assert block.spelling != ">>> outside a fence", f"{where}: a >>> example no parser runs"
        assert block.executable or block.language in NOT_PYTHON, (
            f"{where}: a code block in a language neither run nor listed as shown-only (tests/snippets.py)"
        )
        assert not (block.executable and SKIP.search(block.source)), f"{where}: skips an example; every block runs"
    runnable = [block for block in blocks if block.executable]
    ran = set()
    for example in SYBIL.parse(path):
        example.evaluate()
        (owner,) = [block for block in runnable if block.start <= example.start < block.end]
        ran.add(owner.start)
    missed = [block.spelling for block in runnable if block.start not in ran]
    assert not missed, f"{path.name}: executable blocks that ran nothing: {missed}"
    return runnable
