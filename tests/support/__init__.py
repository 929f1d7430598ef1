"""What the tests share, each defined once.

- `ports`: `free_port`, a port on 127.0.0.1 nothing listens on.
- `progress`: `Quiet`, a calibration progress that says nothing; `Recorder`, one that remembers.
- `simulated`: `simulated_config` and `calibrate`, calibrations on the simulated runner.
- `corpus`: `tiny_corpus` and `TINY_WINDOW`, a small corpus for sweeps on real runners.
- `repos`: `make_repo`, `commit_all`, `git`: real git repositories with fixed hashes.
- `runners`: recorded answers served on 127.0.0.1 (`serve_recorded`), the `ollama` stand-in.
- `processes`: `alive` and `gone`, whether a started process still runs.
- `clocks`: `ManualClock`, a clock that moves only when slept on.
- `slot_builders`: turn results, step records and hypothesis strategies for the judging rules.
- `latency`: streamed turn results and steps with chosen TTFT and ITL (`streamed`, `timed`,
  `latency_sweep`).
- `evidence`: the recorded sweep (`RECORDED`, `recorded_evidence`) and hand-written evidence
  sealed as the writer seals it (`write_sealed`, `write_evidence_file`).
- `kind_names`: where a runner kind's name is spelled in code (`misplaced_names`), for the
  architecture test and the "add a runner kind" recipe's test.
- `rendering`: the renderers called on a saved sweep judged once first, as the commands do
  (`report_of`, `summary_of`, `html_of`, `write_report_of`, `write_html_of`).
- `fixtures`: `isolated_state` (every test gets its own state dir and no user config, autouse),
  `layout` (that state dir as a StateLayout) and `run_cli` (the CLI with stand-in
  collaborators); loaded by tests/conftest.py.
"""
