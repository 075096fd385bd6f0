"""The Python examples run (issue 22): PPO trains two short epochs and `rltune simulate` runs what it
wrote; the CDF plot is drawn."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rltune_cli import RLTUNE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


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


def test_the_wheel_installs_offline_and_imports(tmp_path):
    package = Path(rltune_package_dir())
    wheel_dir, target = tmp_path / "dist", tmp_path / "site"
    made = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "make_wheel.py"), "--package", str(package),
                           "--version", "0.1.0", "--out", str(wheel_dir)], check=True, capture_output=True, text=True)
    wheel = Path(made.stdout.strip())
    assert wheel.exists() and wheel.name.startswith("rltune-0.1.0-cp")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    check = "import rltune; e = rltune.Env(generated={'jobs': 500}, window_len=32); o, i = e.reset(); print(rltune.__file__, o.shape)"
    out = subprocess.run([sys.executable, "-c", check], check=True, capture_output=True, text=True, env=env).stdout
    assert str(target) in out and "(128, 10)" in out


def rltune_package_dir():
    import rltune
    return os.path.dirname(rltune.__file__)
