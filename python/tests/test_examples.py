"""The Python examples run (issue 22): PPO trains two short epochs and `rltune simulate` runs what it
wrote; the CDF plot is drawn."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"
RLTUNE = os.environ.get("RLTUNE_BIN", "rltune")


def run_example(name, *args):
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], check=True, capture_output=True, text=True,
                          env=os.environ)


def test_ppo_trains_and_the_cli_runs_its_policy(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "ppo"
    done = run_example("ppo.py", "--out", str(out), "--epochs", "2", "--episodes", "4", "--envs", "2",
                       "--window-len", "32", "--jobs", "3000", "--iters", "5", "--blocking", "pool")
    assert "epoch 2:" in done.stdout
    policy = json.loads((out / "policy.json").read_text())
    assert policy["epoch"] == 2 and policy["network"]["features"] == 10
    assert len((out / "progress.csv").read_text().splitlines()) == 3
    ran = subprocess.run([RLTUNE, "simulate", "--sample-jobs", "400", "--blocking", "pool", "--policy", f"fcfs,rl:{out}"],
                         check=True, capture_output=True, text=True)
    assert f"rl:{out}" in ran.stdout


def test_the_cdf_plot_is_drawn(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "cdf.png"
    run_example("plot_cdf.py", "--out", str(png), "--jobs", "400", "--policies", "fcfs,sjf")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
