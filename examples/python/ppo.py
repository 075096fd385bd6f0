#!/usr/bin/env python3
"""PPO in plain PyTorch on rltune.VecEnv. Writes OUT/policy.json after every epoch, in the format that
`rltune simulate --policy rl:OUT` (and evaluate, experiment) runs.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/ppo.py --out runs/py-ppo --epochs 20

The policy is the paper's: one MLP (features-32-16-8-1, ReLU) scores every slot, and a softmax over the
legal slots picks the job. The critic reads the whole observation. Rewards are terminal (the
environment's: how much better than the baseline the episode's score is), so advantages come from
whole episodes; steps of an episode still running when an epoch ends are dropped.
"""

import argparse
import json
import os
import time

import numpy as np
import torch
from torch import nn

import rltune


class Policy(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(features, 32), nn.Linear(32, 16), nn.Linear(16, 8), nn.Linear(8, 1)])

    def forward(self, obs, mask):  # obs [B, 128, F], mask [B, 128] -> masked logits [B, 128]
        h = obs
        for k, layer in enumerate(self.layers):
            h = layer(h)
            if k < len(self.layers) - 1:
                h = torch.relu(h)
        return h.squeeze(-1).masked_fill(~mask, -1e9)

    def to_policy_json(self, args, epoch, features):
        layers = [{"in": l.in_features, "out": l.out_features, "weight": l.weight.detach().flatten().tolist(),
                   "bias": l.bias.detach().tolist()} for l in self.layers]
        return {"format": "rltune-policy", "version": 1, "baseline": args.baseline, "score": args.score, "epoch": epoch,
                "commit": True,
                "observation": {"features": args.features, "wait_scale_s": 43200.0, "size_scale": 8.0,
                                "runtime_scale_s": 604800.0},
                "network": {"arch": "mlp", "features": features, "layers": layers}}


class Critic(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(rltune.SLOTS * features, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, obs):
        return self.net(obs).squeeze(-1)


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def collect(vec, policy, episodes, rng):
    """Steps the environments until `episodes` episodes have ended; returns their steps and results."""
    n = len(vec)
    obs, info = vec.reset(seed=int(rng.integers(1 << 31)))
    running = [[] for _ in range(n)]  # per environment: (obs, mask, action, log-prob) of its episode so far
    done, results = [], []
    while len(done) < episodes:
        o, m = torch.from_numpy(obs), torch.from_numpy(info["action_mask"][:, :rltune.SLOTS])
        with torch.no_grad():
            dist = torch.distributions.Categorical(logits=policy(o, m))
            actions = dist.sample()
            logp = dist.log_prob(actions)
        obs, rewards, terminated, _, info = vec.step(actions.numpy())
        for i in range(n):
            running[i].append((o[i], m[i], actions[i], logp[i]))
            if terminated[i] and len(done) < episodes:
                done.append((running[i], float(rewards[i])))
                results.append((info["score"][i], info["baseline_score"][i]))
            if terminated[i]:
                running[i] = []
    return done, results


def advantages(critic, episodes, lam):
    """GAE (gamma 1) over whole episodes with a terminal reward; returns flat tensors."""
    obs, masks, acts, logps, advs, rets = [], [], [], [], [], []
    for steps, reward in episodes:
        o = torch.stack([s[0] for s in steps])
        with torch.no_grad():
            v = critic(o)
        r = torch.zeros(len(steps))
        r[-1] = reward
        next_v = torch.cat([v[1:], torch.zeros(1)])
        delta = r + next_v - v
        adv = torch.zeros(len(steps))
        acc = 0.0
        for t in reversed(range(len(steps))):
            acc = float(delta[t]) + lam * acc
            adv[t] = acc
        obs.append(o)
        masks.append(torch.stack([s[1] for s in steps]))
        acts.append(torch.stack([s[2] for s in steps]))
        logps.append(torch.stack([s[3] for s in steps]))
        advs.append(adv)
        rets.append(torch.full((len(steps),), reward))
    adv = torch.cat(advs)
    return (torch.cat(obs), torch.cat(masks), torch.cat(acts), torch.cat(logps),
            (adv - adv.mean()) / (adv.std() + 1e-8), torch.cat(rets))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="folder for policy.json and progress.csv")
    p.add_argument("--cluster", default="helios")
    p.add_argument("--jobs", type=int, default=20000, help="generated workload: jobs")
    p.add_argument("--load", type=float, default=0.9, help="generated workload: offered load")
    p.add_argument("--window-len", type=int, default=256)
    p.add_argument("--baseline", default="fcfs")
    p.add_argument("--score", default="bsld")
    p.add_argument("--features", default="extended")
    p.add_argument("--blocking", default="global")
    p.add_argument("--envs", type=int, default=4, help="environments stepped together")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--episodes", type=int, default=16, help="episodes per epoch")
    p.add_argument("--pi-lr", type=float, default=1e-3)
    p.add_argument("--vf-lr", type=float, default=1e-3)
    p.add_argument("--iters", type=int, default=40, help="policy and value steps per epoch")
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--target-kl", type=float, default=0.01)
    p.add_argument("--lam", type=float, default=0.97)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    vec = rltune.VecEnv(args.envs, threads=args.threads, cluster=args.cluster,
                        generated={"jobs": args.jobs, "load": args.load, "seed": args.seed}, window_len=args.window_len,
                        baseline=args.baseline, score=args.score, features=args.features, blocking=args.blocking,
                        seed=args.seed)
    policy, critic = Policy(vec.features), Critic(vec.features)
    pi_opt = torch.optim.Adam(policy.parameters(), lr=args.pi_lr)
    vf_opt = torch.optim.Adam(critic.parameters(), lr=args.vf_lr)
    os.makedirs(args.out, exist_ok=True)
    progress = ["epoch,mean_return,score,baseline_score,steps,wall_s"]
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        episodes, results = collect(vec, policy, args.episodes, rng)
        obs, masks, acts, logp_old, adv, ret = advantages(critic, episodes, args.lam)
        for _ in range(args.iters):
            dist = torch.distributions.Categorical(logits=policy(obs, masks))
            logp = dist.log_prob(acts)
            ratio = torch.exp(logp - logp_old)
            loss = -torch.min(ratio * adv, ratio.clamp(1 - args.clip, 1 + args.clip) * adv).mean()
            if (logp_old - logp).mean().item() > 1.5 * args.target_kl:
                break
            pi_opt.zero_grad()
            loss.backward()
            pi_opt.step()
        for _ in range(args.iters):
            vf_opt.zero_grad()
            ((critic(obs) - ret) ** 2).mean().backward()
            vf_opt.step()
        mean_return = float(np.mean([r for _, r in episodes]))
        score, baseline = (float(np.mean(x)) for x in zip(*results))
        progress.append(f"{epoch},{mean_return:.6f},{score:.6f},{baseline:.6f},{len(obs)},{time.perf_counter() - start:.2f}")
        write_atomically(os.path.join(args.out, "policy.json"), json.dumps(policy.to_policy_json(args, epoch, vec.features)))
        write_atomically(os.path.join(args.out, "progress.csv"), "\n".join(progress) + "\n")
        print(f"epoch {epoch}: return {mean_return:+.3f}; {args.score} {score:.3f} vs {args.baseline} {baseline:.3f}", flush=True)
    print(f"wrote {args.out}/policy.json; run it with: rltune simulate --policy rl:{args.out}")


if __name__ == "__main__":
    main()
