"""Runner kinds, one folder each (`llamacpp/`: embedded and llama-server, `ollama/`,
`simulated/`), every one a `contract.RunnerKind` named only in `registry`; beside them the
machinery the kinds share: child processes (`process`, `watchdog`, `cancel`), status GETs and
bounded replies (`local_http`, `replies`), typed JSON reads (`wire`), chat turns and streams
(`chat_turns`, `streaming`), log scanning (`logscan`, `log_patterns`), what calibrate needs
(`calibration_needs`) and prompt counting (`prompt_count`)."""
