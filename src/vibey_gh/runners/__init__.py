"""Runner kinds, one folder each (`llamacpp/`: embedded and llama-server, `ollama/`,
`simulated/`), every one a `contract.RunnerKind` named only in `registry`; beside them the
machinery the kinds share: child processes (`process`, `watchdog`, `cancel`), HTTP (`http/`:
status GETs and bounded replies, typed JSON reads, chat turns and streams), log scanning
(`logscan`, `log_patterns`), what calibrate needs (`calibration_needs`), and a production's
identity where the kind's own words fall short (`builds`: a nameless build keyed to its binary;
`digest`: a model file's or binary's sha256, cached)."""
