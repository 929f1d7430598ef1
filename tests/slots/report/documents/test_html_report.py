"""`slots show --html FILE`: one self-contained page, checked as HTML and in a real headless
Chromium (skipped, with the reason, where Debian's `chromium` package is not installed)."""

from __future__ import annotations

import base64
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from msgspec.structs import replace

from tests.support.evidence import RECORDED
from tests.support.rendering import html_of, write_html_of
from vibey_gh.cli.main import cli
from vibey_gh.interfaces.bounds import Bounds
from vibey_gh.slots.evidence.store import load_evidence
from vibey_gh.slots.report.plotting.plots import PLOT_NAMES
from vibey_gh.state import StateLayout

FINGERPRINT = "a6e718b9b4a7bd46"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SECTIONS = (
    "decision",
    "steps",
    "fidelity",
    "memory",
    "measured-depth-of-the-replayed-prompts",
    "device",
)


class Page(HTMLParser):
    """What a page is made of: section ids, image sources, tags that would fetch or run."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.images: list[str] = []
        self.fetching: list[str] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "section":
            self.sections.append(values.get("id") or "")
        if tag == "img":
            self.images.append(values.get("src") or "")
        if tag in ("script", "link", "iframe", "object") or (
            tag == "img" and not (values.get("src") or "").startswith("data:")
        ):
            self.fetching.append(tag)
        if tag not in ("meta", "img", "br"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, (self.open[-3:], tag)
        self.open.pop()


def parsed(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert page.open == [], "every element is closed"
    return page


@pytest.mark.plots
def test_the_page_has_every_section_and_its_plots_embedded(tmp_path: Path) -> None:
    target = write_html_of(load_evidence(RECORDED), Bounds(), tmp_path / "r.html")
    text = target.read_text(encoding="utf-8")
    page = parsed(text)
    assert set(SECTIONS) <= set(page.sections)
    assert page.fetching == []
    assert len(page.images) == len(PLOT_NAMES)
    for source in page.images:
        prefix = "data:image/png;base64,"
        assert source.startswith(prefix)
        assert base64.b64decode(source[len(prefix) :]).startswith(PNG_SIGNATURE)
    assert "<strong>Ideal N = 1.</strong>" in text
    assert "<th>turns/h</th>" in text and "<td>N=1 again</td>" in text
    assert "default-src 'none'" in text  # nothing may be fetched, even by mistake
    assert not list(tmp_path.glob(".tmp-*"))


def test_without_matplotlib_the_page_says_how_to_get_plots(tmp_path: Path) -> None:
    target = write_html_of(load_evidence(RECORDED), Bounds(), tmp_path / "r.html", plotting=False)
    text = target.read_text(encoding="utf-8")
    assert parsed(text).images == []
    assert "pip install &#x27;vibey-gh[plots]&#x27;" in text or "vibey-gh[plots]" in text


def test_text_is_escaped() -> None:
    recorded = load_evidence(RECORDED)
    notes = ("<script>alert(1)</script> & more",)
    evidence = replace(recorded, document=replace(recorded.document, notes=notes))
    text = html_of(evidence, Bounds(), {})
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in text


def show_html(*args: str) -> object:
    layout = StateLayout.from_env()
    layout.evidence.mkdir(parents=True, exist_ok=True)
    shutil.copy(RECORDED, layout.evidence / f"{FINGERPRINT}.json")
    return CliRunner().invoke(cli, ["slots", "show", "--fingerprint", FINGERPRINT, *args])


def test_the_command_writes_the_page(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    result = show_html("--html", str(target))
    assert result.exit_code == 0, result.output
    assert f"html report: {target}" in result.stdout
    assert set(SECTIONS) <= set(parsed(target.read_text(encoding="utf-8")).sections)


@pytest.mark.parametrize("where", ["missing/report.html", "folder"])
def test_an_unusable_html_path_is_one_line_and_exit_2(tmp_path: Path, where: str) -> None:
    (tmp_path / "folder").mkdir()
    result = show_html("--html", str(tmp_path / where))
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --html ") and result.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]
    assert list((tmp_path / "folder").iterdir()) == []


# --- a real browser -------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium")


def in_chromium(page: Path, profile: Path) -> tuple[str, str]:
    """The DOM Chromium built from the page, and its log (console messages included)."""
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, done.stderr


def console_errors(log: str) -> list[str]:
    return [line for line in log.splitlines() if "CONSOLE" in line or "Refused to" in line]


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium on PATH: apt-get install chromium (Debian's package) to run this test",
)
@pytest.mark.plots
def test_chromium_shows_the_decision_with_no_console_error(tmp_path: Path) -> None:
    target = write_html_of(load_evidence(RECORDED), Bounds(), tmp_path / "r.html")
    dom, log = in_chromium(target, tmp_path / "profile")
    assert "<strong>Ideal N = 1.</strong>" in dom
    assert dom.count("data:image/png;base64,") == len(PLOT_NAMES)
    assert console_errors(log) == []
    # the check itself: a page that tries to fetch something is caught by it
    bad = tmp_path / "bad.html"
    bad.write_text(
        target.read_text(encoding="utf-8").replace(
            "</body>", '<img src="http://127.0.0.1:9/x.png"></body>'
        ),
        encoding="utf-8",
    )
    _, bad_log = in_chromium(bad, tmp_path / "profile-bad")
    assert console_errors(bad_log) != []
