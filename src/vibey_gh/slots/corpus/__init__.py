"""The corpus: the turns a calibration replays, built from lane specs, lane records,
transcripts, recorded agent traces or coding-agent session logs.

Modules: `turns` (turns, runs, segments, strata), `pool` (every turn a source yields), `draw`
(segments or whole runs chosen by seed, stratified by depth), `corpus` (the corpus file:
build, load, the demo corpus), `summary` (what `slots corpus --show` says of one), `enough`
(whether a corpus of whole runs holds enough runs to decide), `profile` (what a corpus
holds: depths, tool time, shared prefix, origins), `git_source` (files of a spec read at a
commit or from a working tree), `fill` (the deepest spec run read on toward the window),
`asked` (what `slots corpus` is asked, checked once, and the corpus drawn from it).

Sub-package: `sources` (where recorded turns come from: each turn's tool time from lane records
and transcripts, recorded agent traces and their stand-in text, coding-agent session logs and
the stand-in for what they leave out).

Public surface: `corpus.Corpus`, `corpus.load_corpus`, `corpus.build_demo_corpus`,
`pool.build_pool`, `turns.Segment`, `turns.Turn`.
"""
