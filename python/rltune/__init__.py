"""rltune for Python: the scheduling environment, simulation, clusters and traces of rltune's C++ engine.

    import rltune
    env = rltune.Env(cluster="helios", generated={"jobs": 20000, "load": 0.9}, window_len=256)
    obs, info = env.reset(seed=1)
    while True:
        action = int(info["action_mask"].nonzero()[0][0])   # your policy here
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated:
            break

The environment is the one `rltune train` learns in (the same decision pass as `rltune simulate`):
an episode is a window of jobs; at each decision the agent picks one of the first 128 queued jobs
(slots, in the baseline's order); the reward is terminal, (baseline - agent) / max(baseline, agent, 1)
on the score. Observations are float32 arrays [128, features] in [0, 1]; info["action_mask"] tells
which actions are legal. Bad arguments raise ValueError with the message the CLI gives.
"""

import numpy as np

from ._core import SKIP, SLOTS, Agent, Cluster, Trace, generate, read_trace, simulate  # noqa: F401
from . import _core

__all__ = ["Env", "VecEnv", "Agent", "Cluster", "Trace", "read_trace", "generate", "simulate", "SLOTS", "SKIP"]

try:  # Gymnasium is optional: spaces and registration when it is there, plain objects otherwise
    import gymnasium as _gym
except ImportError:
    _gym = None


class _Space:
    """What a Gymnasium space tells, for when Gymnasium is not installed."""

    def __init__(self, shape, dtype, low, high, n=None):
        self.shape, self.dtype, self.low, self.high, self.n = shape, np.dtype(dtype), low, high, n

    def __repr__(self):
        if self.n is not None:
            return f"Discrete({self.n})"
        return f"Box({self.low}, {self.high}, {self.shape}, {self.dtype})"


def _spaces(features, actions):
    if _gym is not None:
        return (_gym.spaces.Box(0.0, 1.0, shape=(SLOTS, features), dtype=np.float32),
                _gym.spaces.Discrete(actions))
    return (_Space((SLOTS, features), np.float32, 0.0, 1.0),
            _Space((), np.int64, 0, actions - 1, n=actions))


_EnvBases = (_core._Env,) if _gym is None else (_core._Env, _gym.Env)


def _not_initialised(env):
    # The native object keeps its first settings whatever a second __init__ says: refused, not ignored.
    if getattr(env, "_initialised", False):
        raise TypeError(f"{type(env).__name__} is initialised once: make a new one for other settings")


class Env(*_EnvBases):
    """One scheduling environment (Gymnasium API).

    cluster: a preset ("helios", "philly", "alibaba"), a cluster YAML file or a Cluster.
    trace: a Trace or a trace file; or generated: {"like", "jobs", "load", "seed"} (default: the
        cluster's family, 20,000 jobs at load 0.9, seed 1, as `rltune train`).
    window_len, warmup, train_split, split: episodes are windows of window_len jobs drawn from the
        split ("train": the first train_split of the jobs; "validation", "test", "all"), each after up
        to warmup jobs replayed by fcfs first (not scored).
    baseline, score, features: the heuristic the reward compares against (it also orders the
        observed queue), the score (bsld, wait, jct, sld, util) and the feature set (paper,
        extended, ranked, realistic), as `rltune train`.
    semantics, placement, blocking, backfill, backfill_limits, runtime, runtime_model, milp_model, multifactor_favor_small:
        how jobs start, as `rltune simulate` (--backfill-limits, --runtime-model, --milp-model, --mf-favor-small); milp, multifactor and
        runtime_options (dicts keyed as in experiment YAML, e.g. milp={"extra_nodes": 2},
        runtime_options={"predict_last": 3}) their numeric settings. placement, blocking, backfill and
        milp_model default to greedy, global, False and nodes, or to what the semantics sets; a value
        that contradicts the semantics is an error.
    skip: the agent may also wait (action SKIP). commit: a pick that cannot start yet is kept
        (False: `--reconsider`). seed: the window draws (reset(seed=...) reseeds).
    illegal_action: what step() does with an action of the action space that is not legal now:
        "raise" (ValueError: it catches an agent that ignores the mask) or "first_legal" (it takes the
        first legal action, the baseline's pick, and info["illegal_action"] says so; for agents that do
        not mask and for Gymnasium's env checker). An action outside the action space always raises.
    reset(options={"start": N}) starts the episode at job N of the trace (counted from its first job,
    not from the split's; the window must lie within the split) instead of a drawn window.
    action_masks() is info["action_mask"] of the last step (the method masked PPO implementations ask for).
    """

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, cluster="helios", trace=None, *, generated=None, window_len=256, warmup=0, train_split=0.7,
                 split="train", baseline="fcfs", score="bsld", features="extended", semantics="rltune",
                 placement=None, blocking=None, backfill=None, backfill_limits=False, runtime="oracle", runtime_model="", milp_model=None,
                 milp=None, multifactor=None, multifactor_favor_small=False, runtime_options=None, skip=False, commit=True, seed=0,
                 illegal_action="raise"):
        # None: not given (greedy, global, False, nodes, unless the semantics sets them), so that a value
        # given against the semantics is an error, as in the CLI.
        _not_initialised(self)
        given = {key: value for key, value in dict(placement=placement, blocking=blocking, backfill=backfill,
                                                    milp_model=milp_model).items() if value is not None}
        super().__init__(cluster=cluster, trace=trace, generated=generated, window_len=window_len, warmup=warmup,
                         train_split=train_split, split=split, baseline=baseline, score=score, features=features,
                         semantics=semantics, backfill_limits=backfill_limits, runtime=runtime, runtime_model=runtime_model,
                         milp=milp, multifactor=multifactor, multifactor_favor_small=multifactor_favor_small,
                         runtime_options=runtime_options, skip=skip, commit=commit, seed=seed, illegal_action=illegal_action, **given)
        self._initialised = True
        self.observation_space, self.action_space = _spaces(self.features, self.actions)

    # Written out (not inherited from the native class) so that their signatures can be inspected, as
    # Gymnasium's checker does.
    def reset(self, *, seed=None, options=None):
        if _gym is not None:
            _gym.Env.reset(self, seed=seed)  # seeds Gymnasium's np_random, as its checker expects
        return _core._Env.reset(self, seed=seed, options=options)

    def step(self, action):
        return _core._Env.step(self, action)

    def close(self):
        pass


class VecEnv(_core._VecEnv):
    """n environments stepped together on C++ threads, with stacked arrays and auto-reset.

    Environment i is Env(seed=seed + i, **kwargs): VecEnv(n) equals n Envs stepped in turn. step(actions)
    returns observations [n, 128, features], rewards [n], terminated [n], truncated [n] and info:
    "action_mask" [n, actions], "window_start" [n], and for environments whose episode just ended
    ("_final" [n] marks them) their metrics (score, baseline_score, avg_bsld, ...; NaN elsewhere) and
    "final_window_start" (-1 elsewhere). An ended environment has already started its next episode:
    its observation and window_start are that episode's. After a step or reset that raised, call
    reset() before stepping again. terminated (the same array as info["_final"]) and truncated are
    read-only, and at steps where no episode ended so are the metrics and "final_window_start" (those
    arrays are shared: they are the same at most steps); copy one to change it. With
    illegal_action="first_legal", info["illegal_action"] [n] marks the environments whose action was
    replaced by their first legal one (read-only and shared, as above, at steps where none
    was). action_masks() is info["action_mask"] of the last step.
    reset(options={"start": N}) starts every environment at job N of the trace (as Env.reset);
    {"start": [N0, ...]} (a list or a numpy array) starts environment i at Ni. Later episodes (auto-reset) are drawn windows.
    threads: environment i always steps on thread i % threads (the calling thread is thread 0), so that
    its state stays in one core's caches; threads beyond n would idle, so at most n are used.
    """

    def __init__(self, n, *, threads=2, **env_kwargs):
        _not_initialised(self)
        super().__init__(n, threads, **env_kwargs)
        self._initialised = True
        self.num_envs = n
        self.single_observation_space, self.single_action_space = _spaces(self.features, self.actions)

    def close(self):
        pass


if _gym is not None:
    _gym.register(id="rltune/Scheduling-v0", entry_point="rltune:Env")
