"""The Python module against the C++ engine and the CLI (issue 22). Run by ctest (python_module):
PYTHONPATH holds the built package and RLTUNE_BIN the rltune executable."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rltune
from rltune_cli import RLTUNE


MODELS = Path(__file__).resolve().parents[2] / "models"
SMALL = {"jobs": 3000, "load": 0.9, "seed": 1}


def first_legal(info):
    return int(np.flatnonzero(info["action_mask"])[0])


def play(env, pick, seed=None, start=None):
    """Plays one episode; returns the observations, the actions and the final reward and info."""
    obs, info = env.reset(seed=seed, options=None if start is None else {"start": start})
    observations, actions = [obs], []
    while True:
        a = pick(obs, info)
        obs, reward, terminated, truncated, info = env.step(a)
        assert not truncated
        actions.append(a)
        if terminated:
            return observations, actions, reward, info
        observations.append(obs)


def test_slot_zero_against_fcfs_gets_reward_zero():
    env = rltune.Env(cluster="helios", generated=SMALL, window_len=128, baseline="fcfs", seed=3)
    assert env.observation_space.shape == (rltune.SLOTS, 10)
    assert env.action_space.n == rltune.SLOTS
    for episode in range(3):
        observations, actions, reward, info = play(env, lambda obs, info: 0)
        assert reward == 0.0
        assert info["score"] == pytest.approx(info["baseline_score"])
        assert info["avg_bsld"] >= 1.0
        assert len(actions) > 0
    # With VCs as partitions and backfilling, the head may be blocked: the first legal slot follows FCFS.
    env = rltune.Env(cluster="helios", generated=SMALL, window_len=128, blocking="pool", backfill=True, seed=3)
    for episode in range(3):
        assert play(env, lambda obs, info: first_legal(info))[2] == 0.0
    # A policy that differs from FCFS changes the schedule: the reward is not always 0.
    rewards = [play(env, lambda obs, info: int(np.flatnonzero(info["action_mask"])[-1]))[2] for _ in range(3)]
    assert any(r != 0.0 for r in rewards)


def test_observations_are_in_range_and_masks_match_visible_jobs():
    env = rltune.Env(generated=SMALL, window_len=64, features="realistic", runtime="predicted", blocking="pool",
                     backfill=True, warmup=100, seed=5)
    obs, info = env.reset()
    assert obs.dtype == np.float32 and obs.shape == (rltune.SLOTS, 13)
    assert info["action_mask"].dtype == np.bool_ and info["action_mask"].shape == (rltune.SLOTS,)
    assert info["action_mask"].any()
    assert (obs >= 0).all() and (obs <= 1).all()


def test_env_is_deterministic_for_a_seed():
    def random_player(seed):
        rng = np.random.default_rng(seed)
        return lambda obs, info: int(rng.choice(np.flatnonzero(info["action_mask"])))

    runs = []
    for _ in range(2):
        env = rltune.Env(generated=SMALL, window_len=64, blocking="pool", backfill=True, seed=11)
        episodes = [play(env, random_player(7)) for _ in range(2)]
        runs.append(episodes)
    for (obs_a, act_a, r_a, _), (obs_b, act_b, r_b, _) in zip(*runs):
        assert act_a == act_b and r_a == r_b
        assert all(np.array_equal(x, y) for x, y in zip(obs_a, obs_b))
    # reset(seed=...) starts the same window again.
    env = rltune.Env(generated=SMALL, window_len=64, seed=11)
    _, first = env.reset(seed=99)
    _, again = env.reset(seed=99)
    assert first["window_start"] == again["window_start"]


def test_vecenv_equals_envs_stepped_in_turn():
    n, kwargs = 4, dict(generated=SMALL, window_len=32, blocking="pool", backfill=True, seed=20)
    vec = rltune.VecEnv(n, threads=2, **kwargs)
    singles = [rltune.Env(**{**kwargs, "seed": 20 + i}) for i in range(n)]
    assert len(vec) == n and vec.num_envs == n
    obs, info = vec.reset()
    single = [e.reset() for e in singles]
    assert obs.shape == (n, rltune.SLOTS, 10)
    for i in range(n):
        assert np.array_equal(obs[i], single[i][0])
        assert np.array_equal(info["action_mask"][i], single[i][1]["action_mask"])
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(300):
        actions = np.array([int(rng.choice(np.flatnonzero(info["action_mask"][i]))) for i in range(n)])
        obs, rewards, terminated, truncated, info = vec.step(actions)
        assert not truncated.any() and not truncated.flags.writeable  # shared, so not to be changed
        for i, e in enumerate(singles):
            o, r, t, _, inf = e.step(int(actions[i]))
            assert r == rewards[i] and t == terminated[i]
            if t:  # the vector environment has started the next episode already
                ended += 1
                assert not terminated.flags.writeable and terminated is info["_final"]
                assert info["_final"][i] and info["avg_bsld"][i] == inf["avg_bsld"]
                assert info["final_window_start"][i] == inf["window_start"]  # the ended episode's window
                o, inf = e.reset()
            else:
                assert np.isnan(info["avg_bsld"][i])
            assert np.array_equal(obs[i], o)
            assert np.array_equal(info["action_mask"][i], inf["action_mask"])
            assert info["window_start"][i] == inf["window_start"]
    assert ended > 0


def test_vecenv_reset_options_start_each_environment_where_asked():
    kwargs = dict(generated=SMALL, window_len=32, seed=3)
    vec = rltune.VecEnv(3, **kwargs)
    single = rltune.Env(**kwargs)
    for options, starts in [({"start": 40}, [40, 40, 40]), ({"start": [0, 7, 100]}, [0, 7, 100])]:
        obs, info = vec.reset(options=options)
        assert list(info["window_start"]) == starts
        for i, start in enumerate(starts):
            o, inf = single.reset(options={"start": start})
            assert np.array_equal(obs[i], o) and np.array_equal(info["action_mask"][i], inf["action_mask"])
    for bad, message in [({"start": [1, 2]}, "expected an integer or 3 integers"), ({"start": [1, 2, 2.5]}, r"start'\]\[2\]"),
                         ({"begin": 1}, "unknown key 'begin'"), ([1], "expected a dict"), ({"start": 10**9}, "must lie within")]:
        with pytest.raises(ValueError, match=message):
            vec.reset(options=bad)


def test_illegal_actions_take_the_first_legal_one_when_asked():
    kwargs = dict(generated=SMALL, window_len=48, blocking="pool", backfill=True, seed=4)
    lenient = rltune.Env(illegal_action="first_legal", **kwargs)
    strict = rltune.Env(**kwargs)
    last = rltune.SLOTS - 1
    for seed in (1, 2):
        obs_l, info_l = lenient.reset(seed=seed)
        obs_s, info_s = strict.reset(seed=seed)
        assert info_l["illegal_action"] is False and "illegal_action" not in info_s
        replaced = 0
        while True:
            assert np.array_equal(lenient.action_masks(), info_l["action_mask"])
            illegal = not info_l["action_mask"][last]
            obs_l, r_l, t_l, _, info_l = lenient.step(last)  # mostly an empty slot
            obs_s, r_s, t_s, _, info_s = strict.step(last if not illegal else first_legal(info_s))
            assert info_l["illegal_action"] is illegal
            replaced += illegal
            assert np.array_equal(obs_l, obs_s) and r_l == r_s and t_l == t_s
            if t_l:
                break
        assert replaced > 0 and info_l["avg_bsld"] == info_s["avg_bsld"]
    # Outside the action space it still raises, as does an unknown choice.
    lenient.reset()
    with pytest.raises(ValueError, match="must be in"):
        lenient.step(rltune.SLOTS)
    with pytest.raises(ValueError, match="raise or first_legal"):
        rltune.Env(illegal_action="ignore", **kwargs)
    # VecEnv: per environment, marked in info["illegal_action"].
    vec = rltune.VecEnv(2, illegal_action="first_legal", **kwargs)
    obs, info = vec.reset()
    assert not info["illegal_action"].any()
    assert np.array_equal(vec.action_masks(), info["action_mask"])
    legal = first_legal({"action_mask": info["action_mask"][1]})
    obs, rewards, terminated, truncated, info = vec.step(np.array([last, legal]))
    assert list(info["illegal_action"]) == [True, False]
    strict_vec = rltune.VecEnv(2, **kwargs)
    strict_vec.reset()
    with pytest.raises(ValueError, match="not legal"):
        strict_vec.step(np.array([last, legal]))
    # Outside the action space, the value as given (a uint64 past 2**63 is not shown negative).
    for actions, index, shown in ((np.array([2**63, 0], dtype=np.uint64), 0, "9223372036854775808"), (np.array([0, -1]), 1, "-1")):
        with pytest.raises(ValueError, match=f"^actions\\[{index}\\] = {shown}: must be in \\[0, {vec.actions}\\)$"):
            vec.step(actions)


def test_gymnasium_checker_and_registration():
    gym = pytest.importorskip("gymnasium")  # not a Debian 12 package: runs where it is installed
    from gymnasium.utils.env_checker import check_env

    env = gym.make("rltune/Scheduling-v0", generated=SMALL, window_len=32, illegal_action="first_legal")
    assert isinstance(env.unwrapped, rltune.Env)
    assert env.observation_space == gym.spaces.Box(0.0, 1.0, shape=(rltune.SLOTS, 10), dtype=np.float32)
    assert env.action_space == gym.spaces.Discrete(rltune.SLOTS)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample(mask=info["action_mask"].astype(np.int8)))
    assert info["illegal_action"] is False


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_simulate_equals_the_cli(tmp_path):
    args = ["--cluster", "helios", "--seed", "2", "--sample-jobs", "600", "--blocking", "pool", "--backfill",
            "--runtime", "predicted", "--policy", "fcfs,sjf", "--window", "0:300", "--window", "300:300",
            "--warmup", "50", "--predict-last", "3"]
    subprocess.run([RLTUNE, "simulate", *args, "--out", str(tmp_path)], check=True, capture_output=True)
    results = rltune.simulate("helios", generated={"jobs": 600, "seed": 2}, policies=["fcfs", "sjf"], blocking="pool",
                              backfill=True, runtime="predicted", runtime_options={"predict_last": 3},
                              windows=["0:300", "300:300"], warmup=50, seed=2)
    assert list(results) == ["fcfs+backfill", "sjf+backfill"]  # the names simulate gives (and its folders)
    wall_clock = {"sim_wall_s", "decision_us_p50", "decision_us_p99"}
    for name, result in results.items():
        rows = read_csv(tmp_path / name / "jobs.csv")
        jobs = result["jobs"]
        assert len(rows) == len(jobs["job_id"]) == 600
        for k, row in enumerate(rows):
            for column in ("window", "job_id", "pool", "placement", "status", "reason"):
                assert row[column] == jobs[column][k]
            for column in ("num_gpus", "submit_time", "start_time", "end_time", "wait_s", "jct_s"):
                assert int(row[column]) == jobs[column][k]
            assert float(row["bsld"]) == pytest.approx(jobs["bsld"][k], rel=1e-6)
        with open(tmp_path / name / "summary.json") as f:
            summary = json.load(f)
        for part in ("windows", "aggregate"):
            expected = summary[part] if part == "aggregate" else summary[part]
            got = result["summary"][part]
            if part == "aggregate":
                expected, got = [expected], [got]
            for e, g in zip(expected, got):
                for key, value in e.items():
                    if key not in wall_clock:
                        assert g[key] == value, (name, part, key)


def test_simulate_without_a_trace_generates_what_the_cli_does(tmp_path):
    # It generated 20,000 jobs with seed 1 whatever `seed` said (the environments' default).
    subprocess.run([RLTUNE, "simulate", "--seed", "5", "--policy", "sjf", "--out", str(tmp_path)], check=True, capture_output=True)
    result = rltune.simulate(policies=["sjf"], seed=5)["sjf"]
    assert len(result["jobs"]["job_id"]) == len(read_csv(tmp_path / "jobs.csv")) == 2000
    with open(tmp_path / "summary.json") as f:
        assert result["summary"]["aggregate"]["avg_bsld"] == json.load(f)["aggregate"]["avg_bsld"]
    other = rltune.simulate(policies=["sjf"], seed=6)["sjf"]
    assert other["summary"]["aggregate"]["avg_bsld"] != result["summary"]["aggregate"]["avg_bsld"]


def cli_error(*args):
    done = subprocess.run([RLTUNE, *args], capture_output=True, text=True)
    assert done.returncode == 2
    return done.stderr


@pytest.mark.parametrize("kwargs, flags", [
    ({"runtime": "predicted:unknown"}, ["--runtime", "predicted:unknown"]),
    ({"placement": "nowhere"}, ["--placement", "nowhere"]),
    ({"baseline": "nope"}, ["--policy", "nope"]),
])
def test_bad_arguments_raise_value_error_with_the_cli_message(kwargs, flags):
    with pytest.raises(ValueError) as raised:
        rltune.Env(generated=SMALL, window_len=32, **kwargs)
    message = str(raised.value)
    assert message
    assert message in cli_error("simulate", "--sample-jobs", "100", *flags)


def test_bad_input_never_crashes(tmp_path):
    env = rltune.Env(generated=SMALL, window_len=32, seed=1)
    with pytest.raises(ValueError, match="call reset"):
        env.step(0)
    obs, info = env.reset()
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    with pytest.raises(ValueError, match="not legal"):
        env.step(illegal)
    with pytest.raises(ValueError, match="must be in"):
        env.step(rltune.SLOTS)
    for not_an_action in (True, 0.0, "0", None, np.array([0])):
        with pytest.raises(TypeError, match="expected an integer"):
            env.step(not_an_action)
    with pytest.raises(ValueError, match="action 1180591620717411303424: must be in"):
        env.step(2**70)
    with pytest.raises(ValueError, match="options\\['start'\\]: True is not a valid value"):
        env.reset(options={"start": True})
    with pytest.raises(ValueError, match="window_len: True is not a valid value"):
        rltune.Env(generated=SMALL, window_len=True)
    with pytest.raises(ValueError, match="window_len"):
        rltune.Env(generated={"jobs": 50}, window_len=64)
    with pytest.raises(ValueError, match="^window_len 0: must be between 1 and"):
        rltune.Env(generated=SMALL, window_len=0)
    with pytest.raises(ValueError, match="^train_split 1.5: must be between"):
        rltune.Env(generated=SMALL, train_split=1.5)
    with pytest.raises(ValueError, match="start"):
        env.reset(options={"start": 10**9})
    with pytest.raises(ValueError, match="unknown key"):
        rltune.Env(generated={"jobs": 100, "size": 3})
    with pytest.raises(ValueError, match="generated.jobs"):
        rltune.Env(generated={"jobs": "many"})
    with pytest.raises(ValueError, match="expected a dict"):
        rltune.Env(generated=5)
    with pytest.raises(ValueError, match="start"):
        env.reset(options={"start": -1})
    with pytest.raises(ValueError, match="must lie within"):
        env.reset(options={"start": 2**64 - 1})
    with pytest.raises(TypeError):
        rltune.Env(generated=SMALL, nonsense=1)
    with pytest.raises(ValueError, match="window_len"):
        rltune.Env(generated=SMALL, window_len="long")
    with pytest.raises(ValueError, match="apply only to placement 'milp'"):
        rltune.Env(generated=SMALL, milp={"extra_nodes": 2})
    with pytest.raises(ValueError, match="must be between"):
        rltune.Env(generated=SMALL, placement="milp", milp={"extra_nodes": 100})
    with pytest.raises(ValueError, match="multifactor settings apply only to the multifactor policy"):
        rltune.simulate("helios", generated={"jobs": 100}, policies=["sjf"], multifactor={"age_weight": 5})
    with pytest.raises(ValueError, match="multifactor settings apply only to the multifactor policy"):
        rltune.Env(generated=SMALL, multifactor_favor_small=True)
    rltune.simulate("helios", generated={"jobs": 100}, policies=["sjf", "multifactor"], multifactor={"age_weight": 5})
    with pytest.raises(ValueError, match="no such setting"):
        rltune.simulate("helios", generated={"jobs": 100}, runtime="predicted", runtime_options={"last": 3})
    with pytest.raises(ValueError, match="apply only to runtime 'predicted'"):
        rltune.simulate("helios", generated={"jobs": 100}, runtime_options={"predict_last": 3})
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit_time,duration,num_gpus\na,0,10,1\nb,5,ten,1\n")
    with pytest.raises(ValueError, match=r"bad\.csv:3"):
        rltune.read_trace(str(bad))
    with pytest.raises(ValueError, match="missing"):
        rltune.read_trace(str(tmp_path / "missing.csv"))
    with pytest.raises(ValueError):
        rltune.Cluster("no-such-cluster")
    nowhere = tmp_path / "nowhere.csv"  # every job asks for a VC the cluster does not have
    nowhere.write_text("job_id,submit_time,duration,num_gpus,vc\n" + "".join(f"j{k},{k},60,1,nowhere\n" for k in range(100)))
    with pytest.raises(ValueError, match="none of its jobs can run"):
        rltune.Env(cluster="helios", trace=str(nowhere), window_len=32).reset()
    vec = rltune.VecEnv(2, generated=SMALL, window_len=32)
    vec.reset()
    with pytest.raises(ValueError, match="expected 2 actions"):
        vec.step(np.array([0]))
    with pytest.raises(ValueError, match="threads"):
        rltune.VecEnv(2, threads=5000, generated=SMALL)


def test_objects_made_without_init_are_refused():
    # Type.__new__(Type) gives an object that holds no C++ value: using it must raise, not crash.
    made = [rltune.Trace.__new__(rltune.Trace), rltune.Cluster.__new__(rltune.Cluster),
            rltune.Agent.__new__(rltune.Agent), rltune.Env.__new__(rltune.Env), rltune.VecEnv.__new__(rltune.VecEnv)]
    trace, cluster, agent, env, vec = made
    uses = [lambda: len(trace), lambda: trace.to_dict(), lambda: cluster.name, lambda: agent.name, lambda: env.reset(),
            lambda: env.step(0), lambda: env.action_masks(), lambda: vec.reset(), lambda: vec.step(np.zeros(2, int)),
            lambda: rltune.simulate("helios", trace), lambda: rltune.simulate(cluster, generated={"jobs": 100}),
            lambda: rltune.simulate("helios", generated={"jobs": 100}, policies=[agent]),
            lambda: rltune.Env(cluster=cluster, generated=SMALL), lambda: rltune.VecEnv(2, trace=trace)]
    for use in uses:
        with pytest.raises(TypeError, match="made by __new__ without __init__"):
            use()


def test_a_second_init_is_refused():
    # The native object kept its first settings while the Python side took the second's (num_envs 3 of 2).
    vec = rltune.VecEnv(2, window_len=64, generated=SMALL)
    env = rltune.Env(window_len=64, generated=SMALL)
    with pytest.raises(TypeError, match="VecEnv is initialised once"):
        vec.__init__(3, window_len=32, generated=SMALL)
    with pytest.raises(TypeError, match="Env is initialised once"):
        env.__init__(window_len=32, generated=SMALL)
    assert len(vec) == vec.num_envs == 2
    retried = rltune.Env.__new__(rltune.Env)  # a first __init__ that failed may be tried again
    with pytest.raises(ValueError):
        retried.__init__(window_len=0, generated=SMALL)
    retried.__init__(window_len=64, generated=SMALL)
    assert retried.reset()[0].shape[0] == rltune.SLOTS


def test_arguments_are_refused_rather_than_reinterpreted(tmp_path):
    # A setting that contradicts the semantics is an error, as in the CLI; the same value is fine.
    with pytest.raises(ValueError, match="semantics helios sets placement consolidate; placement greedy contradicts it"):
        rltune.simulate("helios", generated={"jobs": 100}, semantics="helios", placement="greedy")
    with pytest.raises(ValueError, match="semantics helios sets backfill false"):
        rltune.Env(generated=SMALL, window_len=32, semantics="helios", backfill=True)
    with pytest.raises(ValueError, match="milp_model applies only to placement 'milp'"):
        rltune.Env(generated=SMALL, window_len=32, milp_model="ways")
    rltune.Env(generated=SMALL, window_len=32, semantics="helios", placement="consolidate")
    # Actions are integers: 127.9 is not slot 127, nor 0.9 action 0.
    env = rltune.Env(generated=SMALL, window_len=32, seed=1)
    obs, info = env.reset()
    with pytest.raises(TypeError):
        env.step(np.float32(0.0))
    env.step(np.int64(int(np.flatnonzero(info["action_mask"])[0])))
    vec = rltune.VecEnv(2, generated=SMALL, window_len=32)
    obs, info = vec.reset()
    with pytest.raises(TypeError, match="integers"):
        vec.step([0.9, 0.9])
    obs, rewards, terminated, truncated, info = vec.step(info["action_mask"].argmax(axis=1))
    # The shared arrays that say no episode ended cannot be made writeable, to change later steps' results.
    for shared in (truncated, terminated, info["avg_bsld"], info["final_window_start"]):
        for array in (shared, shared.base, shared.view()):
            if isinstance(array, np.ndarray):
                with pytest.raises(ValueError):
                    array.setflags(write=True)
    # Whole numbers are integers and flags are True or False.
    with pytest.raises(ValueError, match=r"window_len: .*64\.7.* is not a valid value"):
        rltune.Env(generated=SMALL, window_len=np.float32(64.7))
    with pytest.raises(ValueError, match="skip: None is not a valid value"):
        rltune.Env(generated=SMALL, window_len=32, skip=None)
    with pytest.raises(ValueError, match="generated.jobs"):
        rltune.Env(generated={"jobs": 2000.9}, window_len=32)
    rltune.Env(generated={"jobs": np.int64(300)}, window_len=np.int32(32), skip=np.bool_(False))
    # Bounds the CLI checks as it parses hold from Python too.
    with pytest.raises(ValueError, match="load 1e-300 must be between 0.001 and 100"):
        rltune.generate("helios", load=1e-300)
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 100 4 -1 -1 4 -1 -1 1 1 1 -1 1 -1 -1 -1\n")
    for bad in (0.0, float("nan"), 1e30):
        with pytest.raises(ValueError, match="gpus_per_proc"):
            rltune.read_trace(str(swf), format="swf", gpus_per_proc=bad)
    with pytest.raises(ValueError, match="vc_column -50"):
        rltune.read_trace(str(swf), format="swf", vc_column=-50)
    # File names may be path objects, as everywhere in Python.
    cluster = tmp_path / "tiny.yaml"
    cluster.write_text("name: tiny\npools:\n  - {name: a, nodes: 2, gpus_per_node: 8}\n")
    assert rltune.Cluster(cluster).total_gpus == 16
    assert len(rltune.read_trace(swf, format="swf")) == len(rltune.read_trace([swf], format="swf")) == 1
    assert rltune.Env(cluster=cluster, trace=swf, window_len=1, split="all") is not None


def test_what_the_cli_refuses_is_refused_from_python_too(tmp_path):
    # Flags are True or False: commit=None would otherwise mean False, which changes the schedule.
    scores = lambda obs, mask: np.arange(float(len(mask)))
    for loose in (None, 0, 1):
        with pytest.raises(ValueError, match=f"commit: {loose} is not a valid value"):
            rltune.Agent(scores, commit=loose)
    with pytest.raises(ValueError, match="jobs: True is not a valid value"):
        rltune.generate("helios", jobs=True)
    with pytest.raises(ValueError, match="n: True is not a valid value"):
        rltune.VecEnv(True, generated=SMALL)
    with pytest.raises(ValueError, match="multifactor.age_weight: True is not a number"):
        rltune.simulate("helios", generated={"jobs": 100}, policies=["multifactor"], multifactor={"age_weight": True})
    with pytest.raises(ValueError, match="seed: -1 is not a valid value"):
        rltune.Env(generated=SMALL, window_len=32).reset(seed=-1)
    # A split too small for a window is said when the environment is made, not at its first reset().
    with pytest.raises(ValueError, match="the train split holds 210 of the trace's 300 jobs, fewer than a window's 256"):
        rltune.Env(generated={"jobs": 300}, window_len=256)
    # A warm-up with no window after the first job would do nothing; a window given twice would count twice.
    for windows in ([], ["0:50"]):
        message = "--warmup 5: no window starts after the trace's first job"
        with pytest.raises(ValueError, match=message):
            rltune.simulate("helios", generated={"jobs": 200}, windows=windows, warmup=5)
        assert message in cli_error("simulate", "--sample-jobs", "200", "--warmup", "5", *sum((["--window", w] for w in windows), []))
    with pytest.raises(ValueError, match="--warmup 1000000000: must be between 0 and"):
        rltune.simulate("helios", generated={"jobs": 200}, windows=["50:50"], warmup=10**9)
    with pytest.raises(ValueError, match="window 50:50 is given twice"):
        rltune.simulate("helios", generated={"jobs": 200}, windows=["50:50", "50:050"])
    # A format's own setting on a file of another format did nothing: an error, as in the CLI.
    plain = tmp_path / "plain.csv"
    plain.write_text("job_id,submit_time,duration,num_gpus\na,0,10,1\n")
    with pytest.raises(ValueError, match="vc_column applies only to the rltune format; .*plain.csv was read as canonical"):
        rltune.read_trace(plain, vc_column=3)
    with pytest.raises(ValueError, match="cannot open the PAI task table"):  # a task table means the PAI format
        rltune.read_trace(plain, pai_task_table=tmp_path / "tasks.csv")
    # Every row skipped: no trace, and the reasons in the message.
    all_bad = tmp_path / "all-bad.csv"
    all_bad.write_text("job_id,submit_time,duration,num_gpus\na,0,x,1\nb,5,y,1\n")
    with pytest.raises(ValueError, match="no valid job left after skipping 2 rows: 2 x duration: is not a number"):
        rltune.read_trace(all_bad, skip_invalid=True)
    # File names as open() takes them: bytes, and names that are not UTF-8; a NUL ends none silently.
    assert len(rltune.read_trace(bytes(plain))) == 1
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.csv"))
    odd.write_text(plain.read_text())
    assert len(rltune.read_trace(odd)) == len(rltune.read_trace(str(odd))) == 1
    assert rltune.read_trace(odd).source == str(odd) and "caf" in repr(rltune.read_trace(odd))
    with pytest.raises(ValueError, match=r"missing\\xe9\.csv: cannot open"):  # the name's bytes shown, not an empty message
        rltune.read_trace(bytes(tmp_path) + b"/missing\xe9.csv")
    with pytest.raises(ValueError, match="cannot hold a NUL"):
        rltune.read_trace(str(plain) + "\0junk")
    # Starts per environment as a numpy array, as actions are given.
    vec = rltune.VecEnv(2, generated=SMALL, window_len=32, split="all")
    obs, info = vec.reset(options={"start": np.array([0, 100])})
    assert list(info["window_start"]) == [0, 100]
    # Predicted runtimes: the summary says how good the estimates were, as summary.json does.
    result = rltune.simulate("helios", generated={"jobs": 300}, runtime="requested")
    assert set(result["fcfs"]["summary"]["runtime_estimates"]) == {"jobs", "median_abs_log_ratio", "under_share", "within_2x_share"}
    assert "runtime_estimates" not in rltune.simulate("helios", generated={"jobs": 300})["fcfs"]["summary"]


def test_a_python_policy_is_ranked_in_float64():
    # Two agents with the same order of scores take the same picks, however close the scores are
    # (1.7e9 + 1 and 1.7e9 + 2 are one float32).
    def near(obs, mask):
        return 1.7e9 + np.arange(len(mask), dtype=np.float64)

    def plain(obs, mask):
        return np.arange(len(mask), dtype=np.float64)

    runs = rltune.simulate("helios", generated={"jobs": 300}, policies=[rltune.Agent(near, name="near"), rltune.Agent(plain, name="plain")])
    assert list(runs["near"]["jobs"]["start_time"]) == list(runs["plain"]["jobs"]["start_time"])
    with pytest.raises(ValueError, match="one real number per action"):
        rltune.simulate("helios", generated={"jobs": 300}, policies=rltune.Agent(lambda obs, mask: ["1"] * len(mask)))


def test_windows_the_cluster_rejects_fail_at_construction(tmp_path):
    # Windows from the second half of this trace hold only jobs the cluster rejects: an episode drawn
    # there could not start, so the environment refuses the split at once, not at some later reset.
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("job_id,submit_time,duration,num_gpus,vc\n" +
                     "".join(f"j{k},{k * 60},600,1,{'0' if k < 50 else 'nowhere'}\n" for k in range(100)))
    with pytest.raises(ValueError, match="^window 50:20 of the all split: none of its jobs can run on cluster helios"):
        rltune.VecEnv(4, cluster="helios", trace=str(mixed), window_len=20, split="all")
    rltune.Env(cluster="helios", trace=str(mixed), window_len=20, train_split=0.5)  # jobs 0..50: every window runs
    # Where the agent decides on other jobs too (the published loop offers rejected ones; a warm-up
    # leaves its own queued), such windows are not refused.
    env = rltune.Env(cluster="helios", trace=str(mixed), window_len=20, split="all", semantics="reference")
    env.reset(options={"start": 60})
    rltune.Env(cluster="helios", trace=str(mixed), window_len=20, split="all", warmup=10)


def test_a_vecenv_that_fails_part_way_must_be_reset():
    vec = rltune.VecEnv(4, generated=SMALL, window_len=20)
    vec.reset()
    with pytest.raises(ValueError, match="start 1000000000: a window of 20 jobs must lie within"):
        vec.reset(options={"start": [0, 0, 0, 10**9]})  # the first three have started again
    with pytest.raises(ValueError, match="call reset"):
        vec.step(np.zeros(4, dtype=np.int64))
    vec.reset()
    vec.step(vec.action_masks().argmax(axis=1))


def test_numeric_settings_reach_the_run():
    env = rltune.Env(generated=SMALL, window_len=32, placement="milp", milp={"extra_nodes": 1, "lookahead": 4}, seed=1)
    assert play(env, lambda obs, info: 0)[2] == 0.0  # milp placement, slot 0 against FCFS
    runs = [rltune.simulate("helios", generated={"jobs": 800}, policies="sjf", blocking="pool", runtime="predicted",
                            runtime_options={"predict_last": k})["sjf"]["jobs"]["start_time"] for k in (1, 20)]
    assert not np.array_equal(*runs)


def test_clusters_traces_and_generated_workloads(tmp_path):
    cluster = rltune.Cluster("helios")
    assert cluster.total_gpus == sum(p["nodes"] * p["gpus_per_node"] for p in cluster.pools)
    trace = rltune.generate(cluster, jobs=500, load=0.9, seed=4)
    assert len(trace) == 500
    columns = trace.to_dict()
    assert (np.diff(columns["submit_time"]) >= 0).all() and (columns["num_gpus"] >= 1).all()
    path = tmp_path / "jobs.csv"
    subprocess.run([RLTUNE, "generate", "--like", "helios", "--jobs", "500", "--load", "0.9", "--seed", "4",
                    "--cluster", "helios", "--out", str(path)], check=True, capture_output=True)
    read = rltune.read_trace(str(path))
    assert read.to_dict()["job_id"] == columns["job_id"]
    assert np.array_equal(read.to_dict()["duration"], columns["duration"])
    # A Trace object and the same file give the same environment.
    a = rltune.Env(cluster=cluster, trace=read, window_len=64, seed=2)
    b = rltune.Env(cluster="helios", trace=str(path), window_len=64, seed=2)
    oa, _ = a.reset()
    ob, _ = b.reset()
    assert np.array_equal(oa, ob)


def numpy_agent(model):
    """The policy network of a model's best.json, written in numpy, as an Agent."""
    with open(model / "best.json") as f:
        policy = json.load(f)
    assert policy["network"]["arch"] == "mlp"
    layers = [(np.array(l["weight"], np.float32).reshape(l["out"], l["in"]), np.array(l["bias"], np.float32))
              for l in policy["network"]["layers"]]

    def scores(obs, mask):
        h = obs
        for k, (w, b) in enumerate(layers):
            h = h @ w.T + b
            if k < len(layers) - 1:
                h = np.maximum(h, 0)
        return h[:, 0]

    return rltune.Agent(scores, name="numpy-mlp", baseline=policy["baseline"],
                        features=policy["observation"]["features"])


def test_a_python_policy_with_a_models_network_gives_its_schedule():
    model = MODELS / "helios-fcfs-bsld-extended"
    agent = numpy_agent(model)
    for blocking in ("global", "pool"):
        runs = rltune.simulate("helios", generated={"jobs": 1500, "seed": 2}, policies=[f"rl:{model}", agent, "fcfs"],
                               blocking=blocking)
        ours, theirs, fcfs = runs["numpy-mlp"]["jobs"], runs[f"rl:{model}"]["jobs"], runs["fcfs"]["jobs"]
        assert np.array_equal(ours["start_time"], theirs["start_time"])
        assert ours["placement"] == theirs["placement"]
        assert not np.array_equal(ours["start_time"], fcfs["start_time"])  # it is not FCFS in disguise


def test_a_python_policy_that_misbehaves_raises():
    def short(obs, mask):
        return np.zeros(3)

    with pytest.raises(ValueError, match="expected 128 scores"):
        rltune.simulate("helios", generated={"jobs": 300}, policies=[rltune.Agent(short)], blocking="pool")

    def broken(obs, mask):
        raise ZeroDivisionError("inside the policy")

    with pytest.raises(ZeroDivisionError, match="inside the policy"):
        rltune.simulate("helios", generated={"jobs": 300}, policies=rltune.Agent(broken))
    class Unreadable:  # as a torch tensor that requires grad: numpy's reason is the useful part
        def __array__(self, dtype=None):
            raise RuntimeError("call .detach() first")

    with pytest.raises(ValueError, match=r"expected 128 scores, .* \(numpy: RuntimeError: call \.detach\(\) first\)"):
        rltune.simulate("helios", generated={"jobs": 300}, policies=[rltune.Agent(lambda obs, mask: Unreadable())])
    with pytest.raises(ValueError):
        rltune.Agent(short, features="none")
    with pytest.raises(ValueError, match="given twice"):
        rltune.simulate("helios", generated={"jobs": 300}, policies=["fcfs", "fcfs"])


def test_every_choice_reaches_the_run_as_the_cli_flag_does(tmp_path):
    # multifactor_favor_small is --mf-favor-small (experiment YAML's multifactor.favor_small): the same
    # schedule as the CLI's, and another than without it.
    subprocess.run([RLTUNE, "simulate", "--sample-jobs", "800", "--policy", "multifactor", "--mf-favor-small",
                    "--out", str(tmp_path)], check=True, capture_output=True)
    cli = [int(row["start_time"]) for row in read_csv(tmp_path / "jobs.csv")]  # one policy: its files in --out
    runs = {flag: rltune.simulate("helios", generated={"jobs": 800}, policies="multifactor",
                                  multifactor_favor_small=flag)["multifactor"]["jobs"]["start_time"] for flag in (True, False)}
    assert list(runs[True]) == cli
    assert list(runs[False]) != cli
    with pytest.raises(ValueError, match="unknown blocking mode 'sometimes'"):
        rltune.simulate("helios", generated={"jobs": 100}, policies="fcfs", blocking="sometimes")
    with pytest.raises(ValueError, match="unknown MILP model 'magic'"):
        rltune.Env(generated=SMALL, window_len=32, milp_model="magic")


def test_backfill_planned_with_time_limits_as_from_the_cli(tmp_path):
    args = ["--cluster", "helios", "--like", "helios-users", "--sample-jobs", "1500", "--sample-load", "1.0", "--policy", "sjf",
            "--blocking", "pool", "--backfill", "--runtime", "predicted", "--backfill-limits"]
    subprocess.run([RLTUNE, "simulate", *args, "--out", str(tmp_path)], check=True, capture_output=True)
    cli = [int(row["start_time"]) for row in read_csv(tmp_path / "jobs.csv")]
    kwargs = dict(generated={"like": "helios-users", "jobs": 1500, "load": 1.0}, policies="sjf", blocking="pool", backfill=True,
                  runtime="predicted")
    runs = {flag: list(rltune.simulate("helios", backfill_limits=flag, **kwargs)["sjf+backfill"]["jobs"]["start_time"]) for flag in (True, False)}
    assert runs[True] == cli and runs[False] != cli
    with pytest.raises(ValueError, match="needs --backfill"):
        rltune.Env(generated=SMALL, window_len=32, backfill_limits=True)


def test_sampled_sjf_and_its_temperature_as_from_the_cli(tmp_path):
    args = ["--cluster", "helios", "--sample-jobs", "800", "--policy", "sjf-sampled", "--temperature", "2", "--seed", "3"]
    subprocess.run([RLTUNE, "simulate", *args, "--out", str(tmp_path)], check=True, capture_output=True)
    cli = [int(row["start_time"]) for row in read_csv(tmp_path / "jobs.csv")]
    runs = {t: list(rltune.simulate("helios", generated={"jobs": 800, "seed": 3}, policies="sjf-sampled", seed=3,
                                    temperature=t)["sjf-sampled"]["jobs"]["start_time"]) for t in (2, 1)}
    assert runs[2] == cli and runs[1] != cli
    with pytest.raises(ValueError, match="temperature applies only to sampled policies"):
        rltune.simulate("helios", generated={"jobs": 100}, policies="sjf", temperature=2)
    with pytest.raises(TypeError, match="temperature"):  # an environment's agent is the caller's: nothing to sample
        rltune.Env(generated=SMALL, window_len=32, temperature=2)
    with pytest.raises(ValueError, match="between 0.01 and 100"):
        rltune.simulate("helios", generated={"jobs": 100}, policies="sjf-sampled", temperature=0)


def test_learned_runtimes_from_python_as_from_the_cli(tmp_path):
    # runtime="predicted:learned" fits the model on the training split as the CLI does, and
    # runtime_model names a fitted file (train writes one beside its model: runtime-model.json).
    like = ["--cluster", "helios", "--like", "helios-users", "--sample-jobs", "1200", "--policy", "sjf", "--blocking", "pool",
            "--backfill", "--runtime", "predicted:learned", "--window", "900:300"]
    subprocess.run([RLTUNE, "simulate", *like, "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    cli = [int(row["start_time"]) for row in read_csv(tmp_path / "cli" / "jobs.csv")]
    run = dict(generated={"like": "helios-users", "jobs": 1200}, policies="sjf", blocking="pool", backfill=True,
               windows=["900:300"])
    learned = rltune.simulate("helios", runtime="predicted:learned", **run)["sjf+backfill"]
    assert list(learned["jobs"]["start_time"]) == cli
    history = rltune.simulate("helios", runtime="predicted", **run)["sjf+backfill"]
    assert list(history["jobs"]["start_time"]) != cli  # the predictor matters to the schedule
    with pytest.raises(ValueError, match="cannot read the runtime model"):
        rltune.simulate("helios", runtime="predicted:learned", runtime_model=str(tmp_path / "none.json"), **run)
    with pytest.raises(ValueError, match="cannot read the runtime model"):
        rltune.Env(generated=SMALL, window_len=32, runtime="predicted:learned", runtime_model=str(tmp_path / "none.json"))
    env = rltune.Env(cluster="helios", generated={"like": "helios-users", "jobs": 1200}, window_len=64, baseline="sjf",
                     blocking="pool", backfill=True, runtime="predicted:learned", features="realistic", seed=1)
    _, _, reward, _ = play(env, lambda obs, info: first_legal(info), seed=1)
    assert np.isfinite(reward)


DAEMON = """
import threading, time, numpy as np, rltune
agent = rltune.Agent(lambda obs, mask: np.arange(len(mask), dtype=float))
vec = rltune.VecEnv(2, window_len=64, generated={"jobs": 3000}, illegal_action="first_legal")
vec.reset()
def stepping():
    while True:
        vec.step(np.zeros(2, dtype=np.int64))
def simulating(policies):
    while True:
        rltune.simulate(generated={"jobs": 20000, "load": 2.0}, policies=policies)
env = rltune.Env(generated={"jobs": 3000}, window_len=64, warmup=1000, illegal_action="first_legal")
def resetting():  # two threads on one Env: one waits for the other's lock
    while True:
        env.reset()
for target, args in ((stepping, ()), (simulating, (["sjf"],)), (simulating, ([agent],)), (resetting, ()), (resetting, ())):
    threading.Thread(target=target, args=args, daemon=True).start()
time.sleep(0.5)
print("main done", flush=True)
"""


def test_daemon_threads_using_the_module_let_python_exit():
    # Python 3.11 ends a daemon thread waiting for the GIL at exit: that aborted (std::terminate) or
    # crashed in a thread still simulating. Each kind of use, several times, since the timing varies.
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", DAEMON], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "main done\n"
        assert "terminate" not in done.stderr


FORKED = """
import os, threading, time, numpy as np, rltune
vec = rltune.VecEnv(2, window_len=64, generated={"jobs": 3000}, illegal_action="first_legal")
vec.reset()
def resetting():
    while True:
        vec.reset()
threading.Thread(target=resetting, daemon=True).start()
time.sleep(0.3)
pid = os.fork()
if pid == 0:
    raise SystemExit(0)  # the child's exit counted the parent's busy thread as its own: it waited for good
_, status = os.waitpid(pid, 0)
print("child status", status, flush=True)
"""


def test_a_forked_child_exits_while_another_thread_uses_the_module():
    done = subprocess.run([sys.executable, "-c", FORKED], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "child status 0\n"


INTERRUPTED = """
import rltune
print("started", flush=True)
try:
    rltune.simulate(generated={"jobs": 300000, "load": 1.5}, policies=["f1"], backfill=True)
    print("completed")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_ctrl_c_stops_a_long_simulation():
    # The run takes over a minute on this project's 2-core machines (400,000 jobs took 170 s); it used
    # to finish before the KeyboardInterrupt was raised. Interrupted, it stops within 0.1 s of the signal.
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "started\n"
    time.sleep(1)  # inside simulate
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)  # a bound on liveness, far above the 0.1 s it takes
    assert out == "interrupted\n", err
