"""The built site in a real browser: Debian's Chromium, driven by Playwright.

Every page loads with no console error and no request leaving localhost;
search finds the tutorial; code blocks have copy buttons; downloads resolve.
Under CI (``CI=true``) these tests must run: a missing Chromium fails them.
"""

import functools
import http.server
import os
import shutil
import threading
from urllib.parse import urlparse

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not os.path.exists(CHROMIUM):
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI must run the browser tests, but there is no Chromium at {CHROMIUM}")
    pytest.skip("no Chromium here; .ci/run installs it with apt", allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402


@pytest.fixture(scope="module")
def site_url(built_site):
    handler = functools.partial(QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, site_url):
    """A page that records console errors and every request that leaves the site."""
    context = browser.new_context()
    page = context.new_page()
    page.console_errors = []
    page.foreign_requests = []
    page.on("console", lambda message: message.type == "error" and page.console_errors.append(message.text))
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    site_host = urlparse(site_url).netloc

    def check_request(request):
        url = urlparse(request.url)
        if url.scheme not in ("data", "blob", "about") and url.netloc != site_host:
            page.foreign_requests.append(request.url)

    page.on("request", check_request)
    yield page
    context.close()


def site_pages(built_site):
    skip = {"genindex.html", "search.html"}
    return sorted(
        str(path.relative_to(built_site))
        for path in built_site.rglob("*.html")
        if "_static" not in path.parts and "_sources" not in path.parts and path.name not in skip
    )


def test_every_page_loads_cleanly(page, site_url, built_site):
    pages = site_pages(built_site)
    assert len(pages) >= 12
    for relative in pages:
        response = page.goto(f"{site_url}/{relative}", wait_until="networkidle")
        assert response.status == 200, relative
        assert page.console_errors == [], f"{relative}: {page.console_errors}"
        assert page.foreign_requests == [], f"{relative}: {page.foreign_requests}"


def test_search_finds_the_tutorial(page, site_url):
    page.goto(f"{site_url}/search.html?q=PrivateUse1", wait_until="networkidle")
    page.wait_for_selector("#search-results li a", timeout=15000)
    found = page.eval_on_selector_all("#search-results li a", "links => links.map(l => l.href)")
    assert any("auto_examples/deep_dives/01_quick_setup" in link for link in found), found
    assert page.console_errors == [] and page.foreign_requests == []


def test_code_blocks_have_copy_buttons(page, site_url):
    page.goto(f"{site_url}/auto_examples/learn/04_autograd_end_to_end.html", wait_until="networkidle")
    blocks = page.locator("div.highlight").count()
    buttons = page.locator("button.copybtn").count()
    assert blocks > 0 and buttons == blocks


def test_downloads_resolve(page, site_url, built_site):
    checked = 0
    for relative in site_pages(built_site):
        if not relative.startswith("auto_examples/") or relative.endswith("index.html"):
            continue
        page.goto(f"{site_url}/{relative}", wait_until="networkidle")
        links = page.eval_on_selector_all("a.download", "links => links.map(l => l.href)")
        assert {link.rsplit(".", 1)[-1] for link in links} >= {"py", "ipynb"}, relative
        for link in links:
            assert page.request.get(link).status == 200, link
            checked += 1
    assert checked >= 16


def test_op_coverage_fits_the_content_column(page, site_url):
    """No table or chart of the Op coverage page is wider than the column, no chart label is cut off."""
    page.goto(f"{site_url}/op_coverage.html", wait_until="networkidle")
    overflowing = page.evaluate("""() => {
        const column = document.querySelector("article.bd-article").getBoundingClientRect();
        const wide = [...document.querySelectorAll("article table, article .pst-scrollable-table-container")]
            .filter(element => element.getBoundingClientRect().right > column.right + 1
                               || element.scrollWidth > element.clientWidth + 1)
            .map(element => element.closest("section").id);
        const chart = document.querySelector("svg.op-coverage-chart");
        const cut = [...chart.querySelectorAll("text")]
            .filter(text => text.getBBox().x + text.getBBox().width > chart.viewBox.baseVal.width)
            .map(text => text.textContent);
        return {wide, cut};
    }""")
    assert overflowing == {"wide": [], "cut": []}
