"""Building the site from a scratch copy of its sources, for tests to inspect."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOPLOT = ["-D", "plot_gallery=0", "-D", "nb_execution_mode=off"]


def copy_sources(work):
    """conf.py, source/, gallery/ and the code the pages include, into ``work``."""
    shutil.copy(ROOT / "conf.py", work)
    ignore = shutil.ignore_patterns("__pycache__", "auto_examples", "sg_execution_times.rst")
    for tree in ("source", "gallery", "backend_pkg", "minimal"):
        shutil.copytree(ROOT / tree, work / tree, ignore=ignore)
    return work


def build(work, *options):
    """Run a strict Sphinx build of ``work``; the CompletedProcess tells how it went."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-W",
            "--keep-going",
            "-c",
            str(work),
            str(work / "source"),
            str(work / "_build" / "html"),
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
