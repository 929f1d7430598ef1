"""What `slots show` prints: the evidence in words on a console, as CSV or an HTML page.

Modules: `show_text` (the answer on a console or as Markdown, CSV and HTML; the sweeps and
soaks kept in history), `step_table_view` (the step table fitted to a terminal's width),
`consoles` (a console whose reader may leave early, and one that writes Markdown).
"""
