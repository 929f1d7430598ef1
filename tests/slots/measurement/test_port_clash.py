"""A calibration port already taken: refused before anything else is said, naming the process
that holds it and what to do."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from msgspec.structs import replace

from tests.support.progress import Recorder
from tests.support.simulated import calibrate, simulated_config
from vibey_gh.errors import BadInput
from vibey_gh.state import StateLayout


def test_a_taken_port_is_refused_first_naming_its_holder(
    tmp_path: Path, layout: StateLayout
) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        config = replace(simulated_config(), calibration_port=listener.getsockname()[1])
        recorder = Recorder()
        with pytest.raises(BadInput) as refused:
            calibrate(tmp_path, layout, config, recorder)
    message = str(refused.value)
    assert f"already in use by pid {os.getpid()} (" in message
    assert message.endswith("(--port N, or [local_models] calibration_port)")
    assert recorder.plans == [] and recorder.started == [], "nothing said or started before"
    assert list(layout.progress.glob("*.json")) == []
