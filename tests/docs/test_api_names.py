"""Every ``torch.…`` name the docs show exists in the installed torch, and
every version they claim agrees with it.

The Python backend API is private and experimental, so a rename upstream
would silently rot the prose; this test turns it into a failure.
"""

import importlib
import re

import pytest
import torch
from sitebuild import ROOT

import backend_pkg  # noqa: F401  (torch.npy exists once the package is imported)

SOURCES = [
    *sorted(ROOT.glob("source/*.rst")),
    *sorted(ROOT.glob("source/*.md")),
    *sorted(ROOT.glob("gallery/**/*.py")),
    *sorted(ROOT.glob("gallery/**/*.rst")),
    ROOT / "README.md",
]
# The package files the gallery shows with ``.. literalinclude::``: their comments are on the site too.
INCLUDED = re.compile(r"literalinclude:: (?:\.\./)+(\S+)")  # from a section's page: ../../../
SOURCES += sorted(
    {ROOT / shown for path in ROOT.glob("gallery/**/*.py") for shown in INCLUDED.findall(path.read_text())}
)
DOTTED_NAME = re.compile(r"(?<![\w./])torch(?:\.\w+)+")
# "Since PyTorch 2.10", "first shipped in PyTorch 2.10.0": claims that a feature exists from a release on.
VERSION_CLAIM = re.compile(
    r"\b(?:since|from|starting from|first shipped in|added in)\s+(?:PyTorch|torch)\s+(\d+\.\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
PIN = re.compile(r"torch==(\d+\.\d+\.\d+)")


def names_shown():
    return sorted({name for path in SOURCES for name in DOTTED_NAME.findall(path.read_text())})


def resolve(dotted):
    """What ``dotted`` names. A submodule ``import torch`` leaves out (torch.utils.cpp_extension), or one its
    package deletes from its namespace (torch.optim.optimizer), is imported."""
    target, parts = torch, dotted.split(".")
    for index, attribute in enumerate(parts[1:], start=2):
        if hasattr(target, attribute):
            target = getattr(target, attribute)
        else:  # ModuleNotFoundError if there is no such module either
            target = importlib.import_module(".".join(parts[:index]))
    return target


def version_tuple(text):
    return tuple(int(part) for part in text.split("+")[0].split(".")[:3])


@pytest.mark.parametrize("name", names_shown())
def test_name_resolves_in_installed_torch(name):
    resolve(name)


def test_names_are_collected():
    names = names_shown()
    assert "torch.utils.backend_registration._setup_privateuseone_for_python_backend" in names
    assert "torch._C._acc.create_empty_tensor" in names
    assert ROOT / "backend_pkg" / "runtime.py" in SOURCES  # shown on the hooks page


def test_version_claims_are_not_newer_than_the_installed_torch():
    installed = version_tuple(torch.__version__)
    claims = {claim for path in SOURCES for claim in VERSION_CLAIM.findall(path.read_text())}
    assert claims, "no version claims found: has the pattern gone stale?"
    for claim in claims:
        assert version_tuple(claim) <= installed, f"docs claim torch {claim}, installed {torch.__version__}"


def first_release_found():
    """The first release ``tools/check_first_release.py`` found the API in, and the releases it looked in."""
    checked = re.findall(
        r"^torch (\S+) \(.*setup_privateuseone_for_python_backend (True|False), "
        r"torch\._C\._acc (True|False)",
        (ROOT / "source" / "first_release.txt").read_text(),
        re.MULTILINE,
    )
    assert all(python == cpp for _, python, cpp in checked), "a wheel has one half of the API without the other"
    with_api = [version for version, python, _ in checked if python == "True"]
    return min(with_api, key=version_tuple), [version for version, _, _ in checked]


def test_the_first_release_claim_is_what_the_wheels_showed():
    """Every "first shipped in" / "since" claim names the first release the recorded wheel check found the API
    in, and that check looked at an earlier release too."""
    first, checked = first_release_found()
    assert any(version_tuple(version) < version_tuple(first) for version in checked)
    claims = {claim for path in SOURCES for claim in VERSION_CLAIM.findall(path.read_text())}
    for claim in claims:
        assert version_tuple(claim) == version_tuple(first)[: len(version_tuple(claim))], (
            f"the docs date the API to {claim}; source/first_release.txt shows {first}"
        )


def test_the_installed_torch_has_the_api():
    assert version_tuple(torch.__version__) >= (2, 10, 0)
    assert callable(resolve("torch.utils.backend_registration._setup_privateuseone_for_python_backend"))
    assert callable(resolve("torch._C._acc.register_python_privateuseone_device_guard"))


def test_pinned_torch_in_docs_is_the_tested_pin():
    """A ``torch==X.Y.Z`` in the docs names the pin, except where it names another torch to check."""
    pin = PIN.search((ROOT / "requirements" / "torch.txt").read_text()).group(1)
    for path in SOURCES:
        for line in path.read_text().splitlines():
            if "check-torch" in line or "TORCH=" in line:
                continue
            for shown in PIN.findall(line):
                assert shown == pin, f"{path.name} shows torch=={shown}, the tested pin is {pin}"
