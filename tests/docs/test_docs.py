"""The executed site builds strictly, with every gallery page, its output and its downloads.

Each page also runs alone, in a fresh interpreter: tests/docs/test_notebooks.py executes the notebook a
reader downloads in a new kernel (running the script too would be a third execution of every page).
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The pages, in a subfolder per section; a file whose name starts with "_" is a helper they import
# (conf.py's ignore_pattern).
GALLERY = sorted(path for path in (ROOT / "gallery").rglob("*.py") if not path.name.startswith("_"))


def page_of(built_site, script):
    """The built page of a gallery script: auto_examples/<section>/<name>.html."""
    return built_site / "auto_examples" / script.relative_to(ROOT / "gallery").with_suffix(".html")


def test_site_has_every_page(built_site):
    for page in ["index.html", "quickstart.html", "auto_examples/index.html", "search.html"]:
        assert (built_site / page).is_file(), page
    for script in GALLERY:
        assert page_of(built_site, script).is_file()


def test_quickstart_notebook_was_executed(built_site):
    page = (built_site / "quickstart.html").read_text()
    assert "device=&#39;npy:0&#39;" in page or "device='npy:0'" in page
    assert "cell_output" in page


def test_gallery_pages_show_outputs_and_offer_downloads(built_site):
    """sphinx-gallery ran every example in the build process, one after another, each printing."""
    end_to_end = (built_site / "auto_examples" / "learn" / "04_autograd_end_to_end.html").read_text()
    assert "gradients match CPU" in end_to_end
    downloads = {path.name for path in (built_site / "_downloads").rglob("*")}
    for script in GALLERY:
        page = page_of(built_site, script).read_text()
        assert 'class="sphx-glr-script-out' in page, f"{script.name} shows no output"
        for suffix in (".py", ".ipynb"):
            name = script.stem + suffix
            assert name in downloads and name in page
