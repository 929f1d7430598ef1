"""Evidence: what a calibration leaves on disk and `slots allowed` reads back (design §7).

Modules: `document` (the evidence file as a typed document), `store` (evidence paths,
integrity, the one reader and writer of evidence files), `checkpoints` (progress files of a
sweep in progress), `requests` (calibration requests), `fingerprint` (what evidence is keyed
to), `figures_cache` (the judged figures kept beside each evidence file), `soak_file` (a
soak's sealed file beside the evidence, and soak requests).

Public surface: `store.load_evidence`, `store.write_evidence`, `store.evidence_path`,
`store.Evidence`, `document.EvidenceDocument`, `checkpoints.ProgressDocument`,
`requests.RequestDocument`, `fingerprint.compute_fingerprint`, `fingerprint.Fingerprint`,
`figures_cache.read_figures`. A damaged file fails as `errors.MalformedJson`, naming the
field's JSON path.
"""
