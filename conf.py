"""Sphinx configuration: the site is built from source/, the gallery from gallery/.

Every example and notebook runs at build time (``make html``); ``make
html-noplot`` renders the same pages without running them.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).parent
# Local extensions: the op coverage tables, built from source/op_coverage.json.
sys.path.insert(0, str(ROOT / "source" / "_ext"))
# The gallery's helper modules, as the pages import them.
sys.path.insert(0, str(ROOT / "gallery"))

import matplotlib  # noqa: E402

matplotlib.use("Agg")  # no window, even with a display: sphinx-gallery draws with Agg too

import _diagrams  # noqa: E402

# The diagrams as images, before any page runs: a page without a figure of its own names
# one as its thumbnail (``# sphinx_gallery_thumbnail_path = "../_build/diagrams/<name>.png"``).
_diagrams.save_all(ROOT / "_build" / "diagrams")

project = "PyTorch Python backends, executed"
author = "The backend_pkg authors"
copyright = "2026, The backend_pkg authors"

extensions = [
    "myst_nb",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    "op_coverage_table",
]

# sphinx-gallery also writes a notebook beside each example for download;
# those are outputs, not documents for myst-nb to parse.
exclude_patterns = ["auto_examples/**.ipynb", "auto_examples/**.py", "auto_examples/**.zip"]

sphinx_gallery_conf = {
    # Relative to source/: the toctree of the sections' pages names them by these paths.
    "examples_dirs": "../gallery",
    "gallery_dirs": "auto_examples",
    # Run every script, not only the plot_* ones.
    "filename_pattern": r".*\.py$",
    # A file whose name starts with "_" is a helper the pages import, not a page.
    "ignore_pattern": r"__init__\.py|(^|/)_[^/]*\.py$",
    # The sections in reading order (a subfolder of gallery/ each, with its GALLERY_HEADER.rst; paths
    # as sphinx-gallery writes them, from source/),
    # each section's pages by file name.
    "subsection_order": [f"../gallery/{section}" for section in ("learn", "deep_dives", "limits")],
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    # Each example imports backend_pkg; registration is once per process and
    # the import is idempotent, so examples can share the build process.
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    # The timing pages load DataTables from a CDN; the site makes no outside requests.
    "write_computation_times": False,
}


def rerun_gallery_pages_reading(data_file):
    """Have sphinx-gallery run each gallery script that reads ``data_file`` again when the file is newer.

    sphinx-gallery reruns a script only when the script itself changes (it
    keeps the script's md5 beside the page), so a page quoting numbers from
    ``data_file`` would go on showing the old ones after ``make bench``.
    """
    scripts, pages = ROOT / "gallery", ROOT / "source" / "auto_examples"
    for script in scripts.rglob("*.py"):  # the pages of every section (a subfolder each)
        stamp = pages / script.relative_to(scripts).parent / f"{script.name}.md5"
        if (
            data_file.name in script.read_text()
            and stamp.exists()
            and stamp.stat().st_mtime < data_file.stat().st_mtime
        ):
            stamp.unlink()


rerun_gallery_pages_reading(ROOT / "source" / "benchmarks.json")

nb_execution_mode = "cache"
nb_execution_cache_path = str(ROOT / "_build" / ".jupyter_cache")
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_execution_show_tb = True

html_theme = "pydata_sphinx_theme"
html_title = "PyTorch Python backends"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
# The theme reads the colour mode from here; left unset, it logs a console error.
html_context = {"default_mode": "auto"}
html_favicon = "source/_static/favicon.svg"
