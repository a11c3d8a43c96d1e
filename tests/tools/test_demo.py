"""`parafeed demo` (the main job of `make demo`) runs end to end and prints the figures it promises."""

import os
import re
import subprocess
import sys

import pytest

from tests import host

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.timeout(300)
def test_demo_trains_with_mirrored_strategy_and_reports_balance(tmp_path):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    # 2 epochs: the first traces the step function, the second gives the samples/s and input-wait figures (epochs 2+)
    command = [sys.executable, "-m", "parafeed", "demo", "--workdir", str(tmp_path), "--epochs", "2"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=host.seconds(280))
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "MirroredStrategy, 2 replicas" in out
    assert float(re.search(r"test accuracy:\s+([0-9.]+)%", out).group(1)) > 60
    assert float(re.search(r"training samples/s:\s+([0-9,]+)", out).group(1).replace(",", "")) > 0
    assert re.search(r"waiting for input:\s+[0-9.]+% of training time", out)
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+[01]\s+\d+\s", line)]
    assert len(rows) == 2 and abs(int(rows[0][1]) - int(rows[1][1])) <= 1
    assert all(abs(int(a) - int(b)) <= 1 for a, b in zip(rows[0][2:12], rows[1][2:12]))  # every class within 1
    assert (tmp_path / "balance.png").read_bytes()[:4] == b"\x89PNG"
