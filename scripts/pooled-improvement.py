#!/usr/bin/env python3
"""Pools an experiment's workloads into one paired comparison against a baseline policy.

    scripts/pooled-improvement.py RUNS_CSV --baseline sjf-sampled [--bound NAME] [--metric avg_bsld] [--trace PREFIX]

`rltune experiment` compares policies per workload (summary.csv). Where several workloads are
independent draws of one family (experiments/realistic-seeds.yaml), this pools their windows: the
improvement is computed as summary.csv computes it, from the sums over all windows (positive = better),
and its 95% interval from a paired bootstrap that resamples windows within each workload (each
workload keeps its number of windows, so a workload's weight does not change from resample to
resample). Each policy is also shown per workload. Only completed runs count, and a policy must have
run on exactly the windows the baseline ran on, or the script stops with an error.

With --bound (a policy given more information, such as oracle runtimes), each policy's row also says
how much of the gap between the baseline and the bound it closes, pooled as above: (baseline - policy)
/ (baseline - bound) from the sums: 100% = as good as the bound, more = better than it. Its interval
comes from the same resamples, leaving out those in which the bound is not better than the baseline;
where they are more than 2.5%, the interval is unbounded and not shown.
"""

import argparse
import csv
import sys
from collections import defaultdict

import numpy as np

LOWER_IS_BETTER = {"avg_wait_s", "p50_wait_s", "p95_wait_s", "p99_wait_s", "avg_jct_s", "p95_jct_s", "avg_bsld",
                   "p95_bsld", "makespan_s", "avg_fragmentation"}
HIGHER_IS_BETTER = {"gpu_utilization"}


def improvement(base, pol, lower):
    """Per cent better than the baseline, from sums (as summary.csv): numbers or numpy arrays."""
    return 100.0 * (base - pol) / base * (1 if lower else -1)


def read_runs(path, metric, trace_prefix):
    """{policy: {(cluster, trace): {window: value}}} for completed runs."""
    values = defaultdict(lambda: defaultdict(dict))
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        if len(set(fields)) != len(fields):
            sys.exit(f"{path}: a column appears twice in the header")
        missing = {"cluster", "trace", "window", "policy", "status", metric} - set(fields)
        if missing:
            sys.exit(f"{path}: no column {', '.join(sorted(missing))} (is it an experiment's runs.csv?)")
        for line, row in enumerate(reader, start=2):
            if row["status"] != "completed" or not row["trace"].startswith(trace_prefix):
                continue
            try:
                value = float(row[metric])
            except ValueError:
                sys.exit(f"{path}:{line}: {metric} '{row[metric]}' is not a number")
            workload = (row["cluster"], row["trace"])
            if row["window"] in values[row["policy"]][workload]:
                sys.exit(f"{path}:{line}: a second run of {row['policy']} on {row['trace']} window {row['window']}")
            values[row["policy"]][workload][row["window"]] = value
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", help="an experiment's runs.csv")
    parser.add_argument("--baseline", required=True, help="the policy to compare against")
    parser.add_argument("--metric", default="avg_bsld", help="a column of runs.csv (default avg_bsld)")
    parser.add_argument("--bound", help="a policy whose gap to the baseline the others are measured against")
    parser.add_argument("--trace", default="", help="only workloads whose trace name starts with this")
    parser.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (default 10000)")
    parser.add_argument("--seed", type=int, default=1, help="bootstrap seed (default 1)")
    a = parser.parse_args()
    if a.metric not in LOWER_IS_BETTER | HIGHER_IS_BETTER:
        sys.exit(f"--metric {a.metric}: not a compared metric (known: {', '.join(sorted(LOWER_IS_BETTER | HIGHER_IS_BETTER))})")
    if a.resamples < 100:
        sys.exit("--resamples: at least 100")
    lower = a.metric in LOWER_IS_BETTER
    values = read_runs(a.runs, a.metric, a.trace)
    if a.baseline not in values:
        sys.exit(f"--baseline {a.baseline}: no completed run of it (policies: {', '.join(sorted(values))})")
    base = values[a.baseline]
    workloads = sorted(base)
    windows = {w: sorted(base[w]) for w in workloads}
    rng = np.random.default_rng(a.seed)
    # One set of resampled window indices per workload, shared by every policy: paired comparisons.
    picks = {w: rng.integers(0, len(windows[w]), size=(a.resamples, len(windows[w]))) for w in workloads}
    b = {w: np.array([base[w][x] for x in windows[w]]) for w in workloads}
    b_sum = sum(v.sum() for v in b.values())
    b_boot = sum(b[w][picks[w]].sum(axis=1) for w in workloads)
    if a.bound is not None and (a.bound not in values or a.bound == a.baseline):
        sys.exit(f"--bound {a.bound}: not a policy other than the baseline with completed runs (policies: {', '.join(sorted(values))})")

    def sums(policy):
        """The policy's values per workload, pooled sum and bootstrap sums, on the baseline's windows."""
        runs = values[policy]
        if sorted(runs) != workloads or any(sorted(runs[w]) != windows[w] for w in workloads):
            sys.exit(f"{policy}: did not run on exactly the windows {a.baseline} ran on")
        p = {w: np.array([runs[w][x] for x in windows[w]]) for w in workloads}
        return p, sum(v.sum() for v in p.values()), sum(p[w][picks[w]].sum(axis=1) for w in workloads)

    gap_column, no_gap = "", 0.0
    if a.bound is not None:
        _, o_sum, o_boot = sums(a.bound)
        sign = 1 if lower else -1
        if (b_sum - o_sum) * sign <= 0:
            sys.exit(f"--bound {a.bound}: no better than {a.baseline} on these windows: there is no gap to close")
        gap_ok = (b_boot - o_boot) * sign > 0
        # Where the bound is not better in a resample the share has no value; beyond the interval's 2.5%
        # tail of such resamples the interval is unbounded.
        no_gap = 1.0 - gap_ok.mean()
        gap_column = f"gap to {a.bound} closed"
        gap_column = gap_column.ljust(max(25, len(gap_column) + 2))
    print(f"{a.metric}: {len(workloads)} workloads, {sum(len(v) for v in windows.values())} windows; "
          f"positive = better than {a.baseline}")
    if no_gap > 0.025:
        print(f"(in {no_gap:.1%} of the resamples {a.bound} is not better than {a.baseline}: "
              "the gap's intervals are unbounded)")
    names = [w[1] for w in workloads]
    widths = [max(len(n), 8) + 2 for n in names]
    print("policy".ljust(28) + "mean".rjust(9) + "   pooled [95% CI]".ljust(28) + gap_column +
          "".join(n.rjust(k) for n, k in zip(names, widths)))
    for policy in sorted(values, key=lambda p: (p != a.baseline, p)):
        p, p_sum, p_boot = sums(policy)
        count = sum(len(v) for v in p.values())
        interval, cells, closed = "", "", ""
        if a.bound is not None and policy not in (a.baseline, a.bound):
            closed = f"{100.0 * (b_sum - p_sum) / (b_sum - o_sum):+6.1f}%"
            if no_gap <= 0.025:
                share = 100.0 * (b_boot[gap_ok] - p_boot[gap_ok]) / (b_boot[gap_ok] - o_boot[gap_ok])
                closed += f" [{np.quantile(share, 0.025):+.1f}, {np.quantile(share, 0.975):+.1f}]"
        closed = closed.ljust(len(gap_column))
        if policy != a.baseline and b_sum != 0:
            ok = b_boot != 0
            boot = improvement(b_boot[ok], p_boot[ok], lower)
            interval = f"{improvement(b_sum, p_sum, lower):+6.1f}% [{np.quantile(boot, 0.025):+.1f}, {np.quantile(boot, 0.975):+.1f}]"
        if policy != a.baseline:
            cells = "".join(("" if b[w].sum() == 0 else f"{improvement(b[w].sum(), p[w].sum(), lower):+.1f}%").rjust(k)
                            for w, k in zip(workloads, widths))
        print((policy.ljust(28) + f"{p_sum / count:9.3f}   " + interval.ljust(25) + closed + cells).rstrip())


if __name__ == "__main__":
    main()
