#!/usr/bin/env python3
"""Step rates of the Python module's environments against the C++ environment, in one run (issue 22).

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_env.py [--episodes 20]

The helios preset, a generated Helios-like workload (20,000 jobs, load 0.9, seed 1), 256-job windows,
extended features, global blocking. Rates are agent steps per second over whole episodes, resets
(which run the baseline over the window) included:
  C++ loop       the environment stepped from C++ (Env._play), legal actions drawn at random
  Python random  Env.step from Python, a random legal action drawn with numpy each step
  Python first   Env.step from Python, the first legal action: what the binding itself costs
  VecEnv(n)      n environments stepped together on n threads, first legal actions (per environment)
"""

import argparse
import time

import numpy as np

import rltune

KWARGS = dict(cluster="helios", generated={"jobs": 20000, "load": 0.9, "seed": 1}, window_len=256, features="extended")


def python_rate(env, episodes, random):
    rng = np.random.default_rng(1)
    steps = 0
    start = time.perf_counter()
    for _ in range(episodes):
        obs, info = env.reset()
        terminated = False
        while not terminated:
            mask = info["action_mask"]
            if random:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            else:
                action = int(mask.argmax())
            obs, reward, terminated, truncated, info = env.step(action)
            steps += 1
    return steps / (time.perf_counter() - start)


def vec_rate(n, episodes):
    vec = rltune.VecEnv(n, threads=n, seed=1, **KWARGS)
    obs, info = vec.reset()
    ended, steps = 0, 0
    start = time.perf_counter()
    while ended < episodes:
        obs, rewards, terminated, truncated, info = vec.step(info["action_mask"].argmax(axis=1))
        ended += int(terminated.sum())
        steps += n
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=20, help="episodes per measurement")
    a = parser.parse_args()
    env = rltune.Env(seed=1, **KWARGS)
    env._play(2)  # warm caches
    start = time.perf_counter()
    cpp = env._play(a.episodes, random=True, seed=1) / (time.perf_counter() - start)
    py_random = python_rate(env, a.episodes, random=True)
    py_first = python_rate(env, a.episodes, random=False)
    vec1 = vec_rate(1, a.episodes)
    vec2 = vec_rate(2, a.episodes)
    print(f"C++ loop (random legal)      {cpp:10.0f} steps/s")
    print(f"Python Env.step (random)     {py_random:10.0f} steps/s  {py_random / cpp:6.1%} of C++")
    print(f"Python Env.step (first)      {py_first:10.0f} steps/s  {py_first / cpp:6.1%} of C++")
    print(f"VecEnv(1)                    {vec1:10.0f} steps/s")
    print(f"VecEnv(2), 2 threads         {vec2:10.0f} steps/s  {vec2 / py_first:5.2f}x one Env (first)")


if __name__ == "__main__":
    main()
