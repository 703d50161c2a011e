"""A broken example, cross-reference or heading fails the strict build.

Each test breaks a scratch copy of the sources in one way and builds it;
the control build shows the unbroken copy passes under the same options.
"""

import pytest
from sitebuild import NOPLOT, build, copy_sources


@pytest.fixture
def sources(tmp_path):
    return copy_sources(tmp_path)


def append(path, text):
    path.write_text(path.read_text() + text)


def test_unbroken_copy_builds(sources):
    result = build(sources, *NOPLOT)
    assert result.returncode == 0, result.stderr[-2000:]


def test_broken_example_fails_the_build(sources):
    (sources / "gallery" / "99_broken.py").write_text(
        '"""\nBroken\n======\n\nAn example that raises.\n"""\n\nraise ValueError("this example is broken")\n'
    )
    # Only the broken example runs: the others run in the executed site build (built_site).
    only_the_broken_one = r"sphinx_gallery_conf.filename_pattern=/99_broken\.py$"
    result = build(sources, "-D", "nb_execution_mode=off", "-D", only_the_broken_one)
    assert result.returncode != 0
    assert "99_broken.py" in result.stdout + result.stderr
    assert "this example is broken" in result.stdout + result.stderr


def test_broken_cross_reference_fails_the_build(sources):
    append(sources / "source" / "see_also.rst", "\nSee :ref:`no-such-label`.\n")
    result = build(sources, *NOPLOT)
    assert result.returncode != 0
    assert "undefined label: 'no-such-label'" in result.stderr


def test_bad_heading_fails_the_build(sources):
    append(sources / "source" / "see_also.rst", "\nA heading too long for its underline\n=====\n\nText.\n")
    result = build(sources, *NOPLOT)
    assert result.returncode != 0
    assert "underline too short" in result.stderr
