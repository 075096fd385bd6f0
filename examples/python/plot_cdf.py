#!/usr/bin/env python3
"""Simulates policies with rltune and plots the CDFs of their waits and bounded slowdowns.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/plot_cdf.py --out cdf.png \
        --policies fcfs,sjf,rl:models/helios-fcfs-bsld-extended --blocking pool
"""

import argparse

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import rltune  # noqa: E402


def cdf(ax, values, label):
    values = np.sort(values)
    ax.step(values, np.arange(1, len(values) + 1) / len(values), where="post", label=label)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="PNG file")
    p.add_argument("--cluster", default="helios")
    p.add_argument("--trace", help="trace file (default: a generated workload)")
    p.add_argument("--jobs", type=int, default=2000, help="generated workload: jobs")
    p.add_argument("--load", type=float, default=0.9, help="generated workload: offered load")
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--policies", default="fcfs,sjf,f1")
    p.add_argument("--blocking", default="pool")
    p.add_argument("--backfill", action="store_true")
    args = p.parse_args()

    generated = None if args.trace else {"jobs": args.jobs, "load": args.load, "seed": args.seed}
    runs = rltune.simulate(args.cluster, args.trace, generated=generated, policies=args.policies.split(","),
                           blocking=args.blocking, backfill=args.backfill, seed=args.seed)
    fig, (wait_ax, bsld_ax) = plt.subplots(1, 2, figsize=(11, 4))
    for name, run in runs.items():
        jobs = run["jobs"]
        done = np.array([s == "completed" for s in jobs["status"]])
        cdf(wait_ax, np.maximum(jobs["wait_s"][done], 1) / 3600, name)
        cdf(bsld_ax, jobs["bsld"][done], f"{name} (avg {run['summary']['aggregate']['avg_bsld']:.2f})")
    wait_ax.set(xscale="log", xlabel="wait (hours; under 1 s shown as 1 s)", ylabel="share of jobs", title="Queueing delay")
    bsld_ax.set(xscale="log", xlabel="bounded slowdown", title="Bounded slowdown")
    for ax in (wait_ax, bsld_ax):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
