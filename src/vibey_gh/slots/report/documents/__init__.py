"""Documents: the full Markdown report and the one-page HTML report.

Modules: `markdown` (the full Markdown report), `context_sections` (device, corpus, bounds, not
measured), `measured_sections` (fidelity, memory, production and depth), `facts` (the numbers
beyond the table), `html` (the one-page HTML report), `corpus_profile` (what a corpus holds,
as `slots corpus --show` prints it).
"""
