"""Evidence: what a calibration leaves on disk and `slots allowed` reads back (design §7).

Modules: `store` (evidence, checkpoint and request files: schema, paths, load, seal),
`fingerprint` (what evidence is keyed to), `figures_cache` (the judged figures kept beside
each evidence file).

Public surface: `store.load_evidence`, `store.evidence_path`, `store.Evidence`,
`fingerprint.compute_fingerprint`, `fingerprint.Fingerprint`, `figures_cache.read_figures`.
"""
