"""The results pages as a reader sees them: the site is built with MkDocs and each results page is opened in a
headless Chromium at 1280 x 900 px. Each page opens with its headline table, and every cell of that table, the score
among them, lies inside the viewport without scrolling sideways; the table starts within the first screen and a half,
in the page's first section. A screenshot of the leaderboard is taken as well.

The test needs a Chromium (or Chrome) on PATH and the docs extra; without them it is skipped with the reason.
"""

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(path.stem for path in (ROOT / "docs" / "results").glob("*.md") if path.stem != "index")
WIDTH, HEIGHT = 1280, 900
BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome", "chrome")
                if shutil.which(name)), None)

# Runs when the page has loaded: the first table of the article, its column count, the rightmost edge of its cells,
# the scroll width of the wrapper Material puts around tables, its top, and how many second-level headings come
# before it.
MEASURE = """<pre id="neuromath-measure"></pre><script>
window.addEventListener("load", () => {
  const article = document.querySelector("article");
  const table = article.querySelector("table");
  const out = {width: window.innerWidth};
  if (table) {
    const cells = [...table.querySelectorAll("th, td")];
    out.columns = table.rows[0].cells.length;
    out.right = Math.max(...cells.map(cell => cell.getBoundingClientRect().right));
    const wrap = table.closest(".md-typeset__scrollwrap") || table.parentElement;
    out.overflow = wrap.scrollWidth - wrap.clientWidth;
    out.top = table.getBoundingClientRect().top;
    out.headings_before = [...article.querySelectorAll("h2")].filter(
      heading => heading.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING).length;
  }
  document.getElementById("neuromath-measure").textContent = JSON.stringify(out);
});
</script>"""


def chromium(*arguments: str) -> str:
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               f"--window-size={WIDTH},{HEIGHT}", "--virtual-time-budget=5000", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return done.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    if BROWSER is None:
        pytest.skip("no Chromium or Chrome on PATH")
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("site")
    subprocess.run(["mkdocs", "build", "-q", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)], check=True, cwd=ROOT,
                   capture_output=True)
    return out


def measure(html: Path) -> dict:
    page = html.parent.name
    probe = html.with_name("probe.html")  # beside the page, so its relative links to styles still resolve
    probe.write_text(html.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = chromium("--dump-dom", probe.as_uri())
    found = re.search(r'<pre id="neuromath-measure">([^<]*)</pre>', dom)
    assert found and found.group(1), f"{page}: the page did not load in {BROWSER}"
    return json.loads(found.group(1))


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_the_headline_table_opens_the_page_and_fits_at_1280_px(site, page):
    seen = measure(site / "results" / page / "index.html")
    assert seen["width"] == WIDTH
    assert "columns" in seen, f"{page}: no table"
    assert seen["headings_before"] <= 1 and seen["top"] <= 1.5 * HEIGHT, f"{page}: the page does not open with its " \
        f"headline table: {seen}"
    assert seen["columns"] <= 5, f"{page}: the headline table has {seen['columns']} columns"
    assert seen["right"] <= WIDTH and seen["overflow"] <= 1, f"{page}: the headline table runs out of view: {seen}"


@pytest.mark.slow
def test_a_screenshot_of_the_leaderboard_is_1280_px_wide(site, tmp_path):
    shot = tmp_path / "leaderboard.png"
    chromium(f"--screenshot={shot}", (site / "results" / "leaderboard" / "index.html").as_uri())
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    assert (width, height) == (WIDTH, HEIGHT)


def test_the_measurement_catches_a_table_too_wide(site, tmp_path):
    """The probe itself: a table wider than the window is reported out of view."""
    page = tmp_path / "wide" / "index.html"
    page.parent.mkdir()
    cells = "".join(f"<td>{'9' * 80}{n}</td>" for n in range(12))
    page.write_text(f"<html><body><article><table><tr>{cells}</tr></table></article></body></html>", encoding="utf-8")
    seen = measure(page)
    assert seen["columns"] == 12 and (seen["right"] > WIDTH or seen["overflow"] > 1)
