"""A gallery script, downloaded, runs outside the repository after the install the gallery's header gives.

The header says: make a virtual environment and ``pip install /path/to/clone``. Here the
environment is a fresh venv that sees the project's installed torch and NumPy (a ``.pth`` file
naming this venv's site-packages, so no wheel is downloaded), and ``backend_pkg`` is installed
into it from a copy of the package's files, not in place.
"""

import shutil
import site
import subprocess
import venv
from pathlib import Path

from sitebuild import ROOT

# A page that needs nothing from a clone (no minimal/, no source/benchmarks.json).
SCRIPT = ROOT / "gallery" / "learn" / "04_autograd_end_to_end.py"
# What `pip install` of a clone reads: pyproject.toml names README.md as the readme.
PACKAGE_FILES = ("pyproject.toml", "README.md", "backend_pkg")


def fresh_venv_seeing_torch(path):
    venv.create(path, with_pip=True)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # A path line in a .pth file adds that folder to sys.path; its own .pth files (this venv's
    # editable install of backend_pkg among them) are not read.
    (Path(purelib) / "project_torch.pth").write_text(site.getsitepackages()[0] + "\n")
    # ensurepip's setuptools (65 for Python 3.11) predates the pyproject.toml's license string;
    # without it, the build finds the project's own.
    subprocess.run(
        [python, "-m", "pip", "uninstall", "--quiet", "--yes", "setuptools"], check=True, capture_output=True
    )
    return python


def copy_of_the_clone(path):
    path.mkdir()
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, path / name)
    return path


def test_a_downloaded_script_runs_after_pip_install_of_a_clone(tmp_path):
    python = fresh_venv_seeing_torch(tmp_path / "env")
    clone = copy_of_the_clone(tmp_path / "clone")
    # --no-deps: torch and NumPy are seen already; --no-build-isolation: setuptools too (no download).
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", str(clone)],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    script = shutil.copy(SCRIPT, downloads)
    where = subprocess.run(
        [python, "-c", "import backend_pkg; print(backend_pkg.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=downloads,
    ).stdout
    assert Path(where).resolve().is_relative_to((tmp_path / "env").resolve()), where
    run = subprocess.run([python, script], capture_output=True, text=True, timeout=300, cwd=downloads)
    assert run.returncode == 0, run.stderr
    assert "gradients match CPU" in run.stdout
