"""Reports: what people read about a sweep, from its evidence judged against today's bounds.

Modules: `summary` (the short Markdown beside every evidence file), `step_table` (the step table
built from its columns: full cells, terminal cells, numbers), `markdown` (the full Markdown report),
`context_sections` (device, corpus, bounds, not measured), `facts` (the numbers beyond the table),
`plots` (PNG plots; `memory_plot` the memory one, `plot_style` what they share), `html` (the
one-page HTML report), `show` (`slots show`), `compare` (`slots compare`), `soak_view` (a soak
in `show`, `--json` and its Markdown report), `soak_plot` (throughput, temperature and power over
a soak).

Public surface: `markdown.write_report`, `summary.render_summary`, `show.gather_show`,
`html.write_html_report`, `compare.compare`.
"""
