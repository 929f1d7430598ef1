"""The corpus: the turns a calibration replays, built from lane specs, records or transcripts.

Modules: `turns` (turns, segments, strata), `pool` (every turn a source yields), `draw`
(segments or whole runs chosen by seed, stratified by depth), `corpus` (the corpus file:
build, load, the demo corpus), `git_source` (files of a spec read at a commit or from a
working tree), `think_time` (each turn's tool time, from lane records and transcripts).

Public surface: `corpus.Corpus`, `corpus.load_corpus`, `corpus.build_demo_corpus`,
`pool.build_pool`, `turns.Segment`, `turns.Turn`.
"""
