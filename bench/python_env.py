#!/usr/bin/env python3
"""Step rates of the Python module's environments against the C++ environment, in one run (issue 22).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_env.py [--episodes 200]

The helios preset, a generated Helios-like workload (20,000 jobs, load 0.9, seed 1), 256-job windows,
extended features, global blocking. Rates are agent steps per second over whole episodes, resets
(which run the baseline over the window) included, each measured after two warm-up episodes (2n in
all for VecEnv(n)): the first episodes fill the observation's caches and run slower.
  C++ loop       the environment stepped from C++ (Env._play), legal actions drawn at random, or the
                 first legal action
  Python random  Env.step from Python, a random legal action drawn each step with Python's random
                 module (np.flatnonzero for the legal actions), against the C++ loop's random draws:
                 the draw in Python (about 1.3 us) is the agent's cost, which the C++ loop hardly pays
  Python numpy   the same with numpy's Generator.integers for the draw (about 1 us more than random)
  Python first   Env.step from Python, the first legal action, against the C++ loop's first legal
                 action: the same schedule, so the difference is what the binding itself costs
  Python replayed  Env.step from Python, random legal actions drawn in an untimed first pass and
                 replayed from a list over the same windows, against the C++ loop's random draws: what
                 the binding costs with random actions, the agent's draw left out on both sides
  VecEnv(n)      n environments stepped together on min(n, 2) threads, first legal actions (steps of all
                 environments), environment i always on thread i % 2. Lock-step waits for the slower
                 step of each call, step times are skewed (most are quick, a few advance through many
                 events; BM_LockStepBound in bench_env.cpp measures the bound that sets), and the
                 binding's own part of each call runs on one thread, so VecEnv(2) gains less than 2x;
                 more environments per thread even out.
  2 C++ loops    two Envs, each played by its own C++ loop on its own thread at the same time (first
                 legal actions), against one such loop measured just before: what this machine gives two
                 independent environments, the ceiling for VecEnv(2). On a 2-vCPU virtual machine it can
                 be far from 2x (the vCPUs may share a physical core or its caches) and varies by host.

With --published DIR, also the published RLTune environment (its HPCEnvSkip, helios, sched_algo 0,
no backfilling) against rltune.Env on the same windows of the same trace (--trace, default the
reference schedules' gen5vc_rltune.csv), random legal actions in both, from a local copy the user makes:
DIR holds helios_env_base_v2.py and allocation_score.py from dshruti20/RLTune and what they import
(numpy, scipy, heapdict; gym, tensorflow and cvxpy are not used on this path: stand-ins that
define gym.Env, gym.spaces.Box/Discrete and gym.utils.seeding.np_random suffice). Nothing of it is
part of rltune.
"""

import argparse
import contextlib
import io
import os
import random
import sys
import threading
import time

import numpy as np

import rltune

KWARGS = dict(cluster="helios", generated={"jobs": 20000, "load": 0.9, "seed": 1}, window_len=256, features="extended")


def python_rate(env, episodes, draw):
    """Steps/s of Env.step with actions drawn by `draw`: "first", "random" or "numpy"."""
    rng, rnd = np.random.default_rng(1), random.Random(1)
    steps = 0
    start = None
    for episode in range(2 + episodes):
        if episode == 2:
            steps, start = 0, time.perf_counter()
        obs, info = env.reset()
        terminated = False
        while not terminated:
            mask = info["action_mask"]
            if draw == "first":
                action = int(mask.argmax())
            else:
                legal = np.flatnonzero(mask)
                action = int(legal[rnd.randrange(len(legal)) if draw == "random" else rng.integers(len(legal))])
            obs, reward, terminated, truncated, info = env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def replay_rate(env, episodes):
    """Steps/s of Env.step replaying random legal actions drawn in a first, untimed pass over the same
    windows (reset(seed=...) starts both passes alike): the binding's cost with random actions, without
    the cost of drawing them in Python."""
    rnd = random.Random(1)
    plays = []
    for episode in range(2 + episodes):
        obs, info = env.reset(seed=11) if episode == 0 else env.reset()
        actions, terminated = [], False
        while not terminated:
            legal = np.flatnonzero(info["action_mask"])
            actions.append(int(legal[rnd.randrange(len(legal))]))
            obs, reward, terminated, truncated, info = env.step(actions[-1])
        plays.append(actions)
    steps = 0
    start = None
    for episode, actions in enumerate(plays):
        if episode == 2:
            steps, start = 0, time.perf_counter()
        obs, info = env.reset(seed=11) if episode == 0 else env.reset()
        for action in actions:
            obs, reward, terminated, truncated, info = env.step(action)
        if not terminated:
            raise RuntimeError("the replay left its recorded path: the environment is not deterministic")
        steps += len(actions)
    return steps / (time.perf_counter() - start)


def cpp_rate(env, episodes, random_actions):
    env._play(2, random=random_actions, seed=2)  # warm-up
    start = time.perf_counter()
    return env._play(episodes, random=random_actions, seed=1) / (time.perf_counter() - start)


def parallel_cpp_rates(episodes):
    """Steps/s of one Env played by a C++ loop, then of two played at once on two threads."""
    envs = [rltune.Env(seed=1 + i, **KWARGS) for i in range(2)]
    single = cpp_rate(envs[0], episodes, False)
    steps = [0, 0]

    def play(i):
        steps[i] = envs[i]._play(episodes // 2, random=False, seed=1)  # releases the GIL

    for env in envs:
        env._play(2, random=False, seed=2)  # warm-up
    threads = [threading.Thread(target=play, args=(i,)) for i in range(2)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return single, sum(steps) / (time.perf_counter() - start)


def vec_rate(n, episodes):
    """Steps/s of VecEnv(n) over episodes x 256 steps in all (about `episodes` episodes), after each
    environment's first two episodes. Episodes are not counted while timed: a numpy reduction per call
    (terminated.sum()) costs about 1.4 us, the agent's, not the environment's."""
    vec = rltune.VecEnv(n, threads=min(n, 2), seed=1, **KWARGS)
    obs, info = vec.reset()
    ended = 0
    while ended < 2 * n:
        obs, rewards, terminated, truncated, info = vec.step(info["action_mask"].argmax(axis=1))
        ended += int(terminated.sum())
    calls = episodes * 256 // n
    start = time.perf_counter()
    for _ in range(calls):
        obs, rewards, terminated, truncated, info = vec.step(info["action_mask"].argmax(axis=1))
    return calls * n / (time.perf_counter() - start)


def published_rates(folder, trace, episodes):
    """Steps/s of the published environment and of rltune.Env on the windows it drew."""
    sys.path.insert(0, folder)
    quiet = contextlib.redirect_stdout(io.StringIO())  # it prints as it goes
    with quiet:
        import helios_env_base_v2 as published
        env = published.HPCEnvSkip(sched_algo=0)
        env.seed(1)
        env.my_init(workload_file=trace, cluster_name="helios")
    rng = random.Random(1)
    starts, steps, start = [], 0, time.perf_counter()
    for _ in range(episodes):
        with contextlib.redirect_stdout(io.StringIO()):
            env.reset()
        starts.append(env.start)
        done = False
        while not done:
            legal = [i for i, pair in enumerate(env.pairs) if pair[0] is not None]
            with contextlib.redirect_stdout(io.StringIO()):
                done = env.step(rng.choice(legal))[2]
            steps += 1
    theirs = steps / (time.perf_counter() - start)
    ours_env = rltune.Env(cluster="helios", trace=rltune.read_trace(trace, format="rltune", vc_column=18, gpu_type_column=-1), window_len=256, split="all",
                          features="paper")
    pick = np.random.default_rng(1)
    steps, start = 0, time.perf_counter()
    for s in starts:
        obs, info = ours_env.reset(options={"start": s})
        terminated = False
        while not terminated:
            legal = np.flatnonzero(info["action_mask"])
            obs, reward, terminated, truncated, info = ours_env.step(int(legal[pick.integers(len(legal))]))
            steps += 1
    return theirs, steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200, help="episodes per measurement (after the warm-up)")
    parser.add_argument("--published", help="folder with a local copy of the published environment (see above)")
    # Its VC is in the last column (the published Helios loader's), and it has no GPU-type column.
    parser.add_argument("--trace", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
                                                        "reference-schedules", "gen5vc_rltune.csv"),
                        help="trace (19-column rltune format) for the comparison with the published environment")
    parser.add_argument("--published-episodes", type=int, default=5)
    a = parser.parse_args()
    env = rltune.Env(seed=1, **KWARGS)
    cpp_random = cpp_rate(env, a.episodes, True)
    cpp_first = cpp_rate(env, a.episodes, False)
    py_random = python_rate(env, a.episodes, "random")
    py_numpy = python_rate(env, a.episodes, "numpy")
    py_first = python_rate(env, a.episodes, "first")
    py_replay = replay_rate(env, a.episodes)
    print(f"C++ loop (random legal)      {cpp_random:10.0f} steps/s")
    print(f"C++ loop (first legal)       {cpp_first:10.0f} steps/s")
    print(f"Python Env.step (random)     {py_random:10.0f} steps/s  {py_random / cpp_random:6.1%} of C++ (random)")
    print(f"Python Env.step (numpy draw) {py_numpy:10.0f} steps/s  {py_numpy / cpp_random:6.1%} of C++ (random)")
    print(f"Python Env.step (first)      {py_first:10.0f} steps/s  {py_first / cpp_first:6.1%} of C++ (first)")
    print(f"Python Env.step (replayed)   {py_replay:10.0f} steps/s  {py_replay / cpp_random:6.1%} of C++ (random)")
    for n in (1, 2, 4, 8):
        vec = vec_rate(n, a.episodes)
        print(f"VecEnv({n}), {min(n, 2)} thread{'s' if n > 1 else ''}       {vec:10.0f} steps/s  {vec / py_first:5.2f}x one Env (first)")
    single, both = parallel_cpp_rates(a.episodes)
    print(f"2 C++ loops, 2 threads     {both:10.0f} steps/s  {both / single:5.2f}x one C++ loop (first), just before: "
          "this machine's ceiling for VecEnv(2)")
    if a.published:
        theirs, ours = published_rates(a.published, a.trace, a.published_episodes)
        print(f"published environment        {theirs:10.0f} steps/s  (its windows of {os.path.basename(a.trace)})")
        print(f"rltune.Env, same windows     {ours:10.0f} steps/s  {ours / theirs:6.0f}x the published one")


if __name__ == "__main__":
    main()
