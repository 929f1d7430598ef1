"""Reports: what people read about a sweep, from its evidence judged against today's bounds.

Modules: `summary` (the short Markdown beside every evidence file), `show` (`slots show`),
`compare` (`slots compare`), `after_sweep` (what `slots allowed` answers after a sweep, and
the config line that would use its evidence), `soak_view` (a soak in `show`, `--json` and its
Markdown report).

Sub-packages: `tables` (the step table built from its columns: full cells, terminal cells,
numbers; the latency table; the split-window what-if), `documents` (the full Markdown report
and its sections, the facts beyond the table, the one-page HTML report, a corpus's profile),
`plotting` (PNG plots of a sweep, its latency and a soak, and what they share), `terminal`
(`slots show` in words: on a console fitted to its width, as Markdown, CSV and HTML).

Public surface: `markdown.write_report`, `summary.render_summary`, `show.gather_show`,
`html.write_html_report`, `compare.compare`.
"""
