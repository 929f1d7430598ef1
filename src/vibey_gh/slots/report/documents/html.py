"""`slots show --html FILE`: the evidence report as one self-contained page.

The page carries the same sections as the Markdown report (decision, steps, throughput,
fidelity, memory, measured depth, device, corpus, bounds, what was not measured), made from the
same text, so the two never disagree. The plots are embedded as PNG data URIs; the page has no
script and loads nothing, which its Content-Security-Policy makes sure of: one file to send a
colleague, readable offline.

The converter knows exactly the Markdown the report writes: headings, paragraphs, pipe tables,
bullet lists, quotes, fenced blocks, images, `code` and **bold**.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Mapping
from pathlib import Path

from ....errors import BadInput
from ....files import PRIVATE_FILE, atomic_write_shared_text
from ....interfaces.bounds import Bounds
from ...evidence.store import Evidence
from ...judging.judge import SweepJudgement
from ..plotting import plots as plot_module  # its plots_available is read when asked
from ..plotting.plots import PLOTS_MISSING, build_figures, figure_png
from .markdown import render_report

IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)]*)\)$")
PLOT_SOURCE = "plot:"
STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 72rem; margin: 2rem auto;
       padding: 0 1rem; color: #1b1b1b; }
h1 { font-size: 1.6rem; } h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; }
th { background: #f3f3f3; }
code { background: #f3f3f3; padding: 0 0.2rem; }
pre { background: #f3f3f3; padding: 0.5rem; overflow-x: auto; }
blockquote { border-left: 4px solid #c60; margin: 1rem 0; padding: 0.25rem 1rem; }
img { max-width: 100%; height: auto; }
section#decision { background: #f4f8ff; padding: 0.25rem 1rem; border-radius: 6px; }
"""
# nothing may be fetched: inline style and data: images only
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def _inline(text: str) -> str:
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", escaped)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(rows: list[str]) -> list[str]:
    head, body = _cells(rows[0]), [_cells(r) for r in rows[2:]]
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>"]
    out.append("</thead><tbody>")
    out += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>" for row in body]
    return [*out, "</tbody></table>"]


def _image(match: re.Match[str], plots: Mapping[str, bytes]) -> list[str]:
    source = match["src"]
    data = plots.get(source.removeprefix(PLOT_SOURCE)) if source.startswith(PLOT_SOURCE) else None
    if data is None:
        return []
    uri = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return [f'<p><img alt="{html.escape(match["alt"])}" src="{uri}"></p>']


def markdown_to_html(markdown: str, plots: Mapping[str, bytes]) -> str:
    """The report's Markdown as HTML body text; `![alt](plot:NAME)` becomes plots[NAME]."""
    out: list[str] = []
    lines = markdown.splitlines()
    index = 0
    in_section = False
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
        elif line.startswith("```"):
            end = next(
                (j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), None
            )
            stop = len(lines) if end is None else end
            out.append("<pre>" + html.escape("\n".join(lines[index + 1 : stop])) + "</pre>")
            index = stop + 1
        elif line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            title = line[level:].strip()
            if level == 2:
                if in_section:
                    out.append("</section>")
                slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
                out.append(f'<section id="{slug}">')
                in_section = True
            out.append(f"<h{level}>{_inline(title)}</h{level}>")
            index += 1
        elif line.startswith("|"):
            end = index
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            out += _table(lines[index:end])
            index = end
        elif line.startswith(("- ", "> ")):
            marker = line[:2]
            end = index
            while end < len(lines) and lines[end].startswith(marker):
                end += 1
            items = [_inline(item[2:]) for item in lines[index:end]]
            if marker == "- ":
                out += ["<ul>", *(f"<li>{item}</li>" for item in items), "</ul>"]
            else:
                out.append("<blockquote><p>" + "<br>".join(items) + "</p></blockquote>")
            index = end
        elif (image := IMAGE.match(line.strip())) is not None:
            out += _image(image, plots)
            index += 1
        else:
            end = index
            while (
                end < len(lines)
                and lines[end].strip()
                and not lines[end].startswith(("#", "|", "- ", "> ", "```", "!["))
            ):
                end += 1
            out.append("<p>" + "<br>".join(_inline(x) for x in lines[index:end]) + "</p>")
            index = end
    if in_section:
        out.append("</section>")
    return "\n".join(out)


def render_html(
    evidence: Evidence,
    bounds: Bounds,
    plots: Mapping[str, bytes],
    depth_estimates: Mapping[str, int] | None = None,
    plots_note: str | None = None,
    *,
    judgement: SweepJudgement,
) -> str:
    """The whole page: the report's sections, with `plots` (name → PNG bytes) embedded;
    `judgement` is the sweep as already judged against `bounds`."""
    markdown = render_report(
        evidence,
        bounds,
        {name: PLOT_SOURCE + name for name in plots},
        depth_estimates,
        plots_note=plots_note,
        judgement=judgement,
    )
    title = f"Slots evidence report {evidence.fingerprint}"
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"{markdown_to_html(markdown, plots)}\n</body>\n</html>\n"
    )


def write_html_report(
    evidence: Evidence,
    bounds: Bounds,
    path: Path,
    plotting: bool | None = None,
    *,
    judgement: SweepJudgement,
) -> Path:
    """Write the page to `path` in one rename (0600); the folder must exist and is left as
    it is. Without matplotlib the page has no plots and says how to get them. `judgement`:
    the sweep as already judged against `bounds`."""
    if not path.parent.is_dir():
        raise BadInput(f"--html {path}: no such folder {path.parent}")
    if path.is_dir():
        raise BadInput(f"--html {path}: is a folder")
    if plotting is None:
        plotting = plot_module.plots_available()
    plots: dict[str, bytes] = {}
    if plotting:
        figures = build_figures(evidence, judgement, bounds)
        plots = {name: figure_png(figure) for name, figure in figures.items()}
    page = render_html(
        evidence,
        bounds,
        plots,
        plots_note=None if plotting else PLOTS_MISSING,
        judgement=judgement,
    )
    try:
        atomic_write_shared_text(path, page, PRIVATE_FILE)
    except PermissionError:
        raise BadInput(f"--html {path}: the folder is not writable") from None
    return path


__all__ = ["markdown_to_html", "render_html", "write_html_report"]
