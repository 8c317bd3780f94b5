"""``waza noise``: how noisy is this suite, what change can it see, and how many trials does it need?

Read one results file with several trials per task, or two or more runs of the same suite (an
A/A pair: nothing changed between them), and say three things:

- **flip rates**: per task, how often two of its trials disagree, and (with several files) how
  often its verdict (status) differs from one file to another;
- **the between-run spread**: how far the suite's pass rate and success rate move between two
  runs of this design when nothing changed (sd, and the 95 % range of their difference);
- **the minimum detectable effect** (MDE): the smallest drop of the mean pass rate that the
  gate's paired sign-flip test finds with probability ``power`` at ``alpha`` when both files have
  this design (tasks x trials); :mod:`waza_core.results.power` simulates it (the same function
  gives the MDE of ``waza gate --significance`` and ``waza compare``).

With an ``effect``, also **power planning**: how many trials per task reach ``power`` for a drop
of ``effect``, and when no number up to a cap does, how many tasks (drawn from the pilot's).

Everything is simulated from the files' own per-task pass rates, with the correlation model of
:mod:`waza_core.results.power` (docs/statistics.md, "The noise floor"). Every draw is seeded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from waza_core.errors import WazaError
from waza_core.results import power as simulated
from waza_core.results import significance
from waza_core.results.compare import load_all
from waza_core.results.markdown_text import terminal_text
from waza_core.results.power import Design
from waza_core.results.stream import StreamedResults

MAX_TRIALS = 20
MAX_TASKS = 2_000


@attrs.define
class NoiseOptions:
    alpha: float = 0.05
    power: float = 0.8
    effect: float | None = None
    simulations: int = simulated.SIMULATIONS
    seed: int = simulated.SEED
    correlation: float | None = None  # None: estimate from the files
    max_trials: int = MAX_TRIALS
    max_tasks: int = MAX_TASKS


def check_options(opts: NoiseOptions) -> None:
    """Raise ValueError naming the option for a value the simulation cannot use."""
    for flag, value in (("--alpha", opts.alpha), ("--power", opts.power)):
        if not 0 < value < 1:
            raise ValueError(f"{flag} must be between 0 and 1 (exclusive), e.g. 0.05 or 0.8; got {value}")
    if opts.effect is not None and not 0 < opts.effect <= 1:
        raise ValueError(f"--effect must be a drop of the pass rate between 0 and 1, e.g. 0.10; got {opts.effect}")
    if opts.correlation is not None and not 0 <= opts.correlation <= 1:
        raise ValueError(f"--correlation must be 'auto' or a number from 0 to 1; got {opts.correlation}")
    if not 100 <= opts.simulations <= 100_000:
        raise ValueError(f"--simulations must be from 100 to 100000; got {opts.simulations}")
    if not 1 <= opts.max_trials <= 1_000:
        raise ValueError(f"--max-trials must be from 1 to 1000; got {opts.max_trials}")
    if not 2 <= opts.max_tasks <= 100_000:
        raise ValueError(f"--max-tasks must be from 2 to 100000; got {opts.max_tasks}")


# -- what the files say ---------------------------------------------------------------------

@attrs.define
class Observed:
    """Per file and task: passed and graded runs, and the task's status (verdict)."""

    files: list[str]
    task_ids: list[str]
    names: list[str]
    passed: np.ndarray  # files x tasks
    graded: np.ndarray  # files x tasks (0: absent or no graded run)
    statuses: list[list[str | None]]  # files x tasks (None: absent)
    success_rates: list[float]  # waza's summary success rate of each file


def read_observed(paths: Sequence[str]) -> Observed:
    """Each file read by the results readers (streamed when it can be), kept as counts."""
    index: dict[str, int] = {}
    names: list[str] = []
    per_file: list[dict[int, tuple[int, int, str]]] = []
    rates = []
    for path, doc in zip(paths, load_all(list(paths)), strict=True):
        header = doc.header if isinstance(doc, StreamedResults) else doc
        rates.append(float(header["summary"]["success_rate"]))
        seen: dict[int, tuple[int, int, str]] = {}
        for task in doc.tasks() if isinstance(doc, StreamedResults) else doc["tasks"]:
            tid = str(task["test_id"])
            if tid not in index:
                index[tid] = len(index)
                names.append(str(task.get("display_name") or tid))
            passed, graded = significance.task_counts({"tasks": [task]}).get(tid, (0, 0))
            seen[index[tid]] = (passed, graded, str(task["status"]))
        if not any(graded for _, graded, _ in seen.values()):
            raise WazaError(f"{path}: no task has a graded run (every run is n/a or skipped, or there are no "
                            "tasks): nothing to measure noise on")
        per_file.append(seen)
    n = len(index)
    passed_m = np.zeros((len(paths), n), dtype=np.int64)
    graded_m = np.zeros((len(paths), n), dtype=np.int64)
    statuses: list[list[str | None]] = []
    for f, seen in enumerate(per_file):
        row: list[str | None] = [None] * n
        for t, (passed, graded, status) in seen.items():
            passed_m[f, t], graded_m[f, t], row[t] = passed, graded, status
        statuses.append(row)
    return Observed(list(paths), list(index), names, passed_m, graded_m, statuses, rates)


def flip_rates(obs: Observed) -> tuple[np.ndarray, np.ndarray]:
    """Per task: the share of pairs of its graded trials (all files together) that disagree, and
    the share of pairs of files whose status for it differs (NaN where there is no pair)."""
    k, n = obs.passed.sum(axis=0).astype(float), obs.graded.sum(axis=0).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        trial = np.where(n >= 2, k * (n - k) / (n * (n - 1) / 2), np.nan)
    run = np.full(len(obs.task_ids), np.nan)
    for t in range(len(obs.task_ids)):
        seen = [row[t] for row in obs.statuses if row[t] is not None]
        pairs = len(seen) * (len(seen) - 1) // 2
        if pairs:
            run[t] = sum(a != b for i, a in enumerate(seen) for b in seen[i + 1:]) / pairs
    return trial, run


# -- simulation -----------------------------------------------------------------------------

def spread(design: Design, opts: NoiseOptions) -> dict[str, Any]:
    """How far two runs of this design move apart when nothing changed (see
    :func:`waza_core.results.power.aa_spread`, which gate and compare use too)."""
    return simulated.aa_spread(design, opts.simulations, opts.seed)


# -- power planning -------------------------------------------------------------------------

def _smallest(values: list[int], reaches: Any) -> int | None:
    """The smallest integer in [values[0], values[-1]] for which ``reaches`` holds, searching the
    ladder ``values`` first and then bisecting (``reaches`` is taken as monotone)."""
    previous = None
    for value in values:
        if reaches(value):
            if previous is None:
                return value
            low, high = previous, value
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (low, middle) if reaches(middle) else (middle, high)
            return high
        previous = value
    return None


def _ladder(start: int, cap: int) -> list[int]:
    values, value = [], start
    while value < cap:
        values.append(value)
        value *= 2
    return values + [cap]


def plan(design: Design, opts: NoiseOptions) -> dict[str, Any]:
    """Trials per task needed for a drop of ``opts.effect`` at ``opts.power``; when none up to
    ``opts.max_trials`` is enough, tasks needed (the pilot's tasks bootstrapped) at its trials."""
    assert opts.effect is not None
    curve: list[dict[str, Any]] = []
    mean = float(design.rates.mean())

    def reaches(tasks: int, trials: int) -> bool:
        value = simulated.power_at(Design(design.rates, tasks, trials, design.rho), opts.effect, opts.alpha,
                               opts.simulations, opts.seed)
        curve.append({"tasks": tasks, "trials": trials, "power": value})
        return value >= opts.power

    out: dict[str, Any] = {"effect": opts.effect, "effect_pct": round(opts.effect * 100, 9), "power": opts.power,
                           "tasks": design.tasks, "trials": design.trials, "trials_needed": None,
                           "tasks_needed": None, "max_trials": opts.max_trials, "max_tasks": opts.max_tasks}
    if opts.effect > mean:
        out["note"] = (f"the pilot's mean pass rate is {mean:.3f}: it cannot drop by {opts.effect}")
        out["curve"] = curve
        return out
    out["trials_needed"] = _smallest(_ladder(1, opts.max_trials), lambda m: reaches(design.tasks, m))
    if out["trials_needed"] is None:
        start = max(2, design.tasks)
        if start < opts.max_tasks:
            out["tasks_needed"] = _smallest(_ladder(start, opts.max_tasks), lambda n: reaches(n, design.trials))
    out["curve"] = sorted(curve, key=lambda p: (p["tasks"], p["trials"]))
    return out


# -- the report -----------------------------------------------------------------------------

def build_report(paths: Sequence[str], opts: NoiseOptions) -> dict[str, Any]:
    """The ``waza noise`` report (its JSON keys are listed in docs/statistics.md)."""
    obs = read_observed(paths)
    design, correlation = simulated.design_of(obs.passed, obs.graded, opts.correlation)
    trial_flip, run_flip = flip_rates(obs)
    mde, curve = simulated.minimum_detectable_effect(design, opts.alpha, opts.power, opts.simulations, opts.seed)
    report: dict[str, Any] = {
        "files": list(paths), "tasks": design.tasks, "trials_per_task": design.trials,
        "alpha": opts.alpha, "power": opts.power, "simulations": opts.simulations, "seed": opts.seed,
        "test": "paired_sign_flip_permutation", "sign_flips": simulated.SIMULATION_FLIPS,
        "correlation": correlation,
        "flip_rate": _flip_summary(trial_flip, run_flip, len(paths)),
        "spread": {**spread(design, opts), "observed": _observed(obs)},
        "minimum_detectable_effect": mde, "minimum_detectable_effect_pct": None if mde is None else round(mde * 100, 9),
        "mde_curve": curve,
        "per_task": _per_task(obs, trial_flip, run_flip),
    }
    report["warnings"] = _warnings(obs)
    if opts.effect is not None:
        report["plan"] = plan(design, opts)
    return report


def _warnings(obs: Observed) -> list[str]:
    """What makes the figures unreliable, said plainly: with one graded trial per task in all
    the files, every task looks deterministic, so the simulation sees no noise at all."""
    if int(obs.graded.sum(axis=0).max(initial=0)) <= 1:
        return ["every task has one graded trial in all these files, so each looks deterministic and the spread "
                "and minimum detectable effect below assume no noise at all, which is surely too optimistic: "
                "run with trials_per_task of 2 or more, or give two runs of the suite (an A/A pair)"]
    return []


def _mean_or_none(values: np.ndarray) -> float | None:
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else None


def _flip_summary(trial: np.ndarray, run: np.ndarray, files: int) -> dict[str, Any]:
    return {
        "trials": _mean_or_none(trial), "tasks_with_trial_pairs": int((~np.isnan(trial)).sum()),
        "tasks_flipped": int((trial > 0).sum()),
        "runs": _mean_or_none(run) if files > 1 else None,
        "tasks_with_run_pairs": int((~np.isnan(run)).sum()),
        "tasks_changed_between_runs": int((run > 0).sum()),
    }


def _observed(obs: Observed) -> list[dict[str, Any]]:
    out = []
    for f, path in enumerate(obs.files):
        graded = obs.graded[f] > 0
        rate = float((obs.passed[f][graded] / obs.graded[f][graded]).mean())
        out.append({"file": path, "pass_rate": rate, "success_rate": obs.success_rates[f]})
    return out


def _per_task(obs: Observed, trial: np.ndarray, run: np.ndarray) -> list[dict[str, Any]]:
    rows = []
    for t, tid in enumerate(obs.task_ids):
        passed, graded = int(obs.passed[:, t].sum()), int(obs.graded[:, t].sum())
        rows.append({
            "task_id": tid, "display_name": obs.names[t], "passed": passed, "graded": graded,
            "pass_rate": passed / graded if graded else None,
            "trial_flip_rate": None if math.isnan(trial[t]) else float(trial[t]),
            "run_flip_rate": None if math.isnan(run[t]) else float(run[t]),
            "statuses": [row[t] for row in obs.statuses],
        })
    return rows


# -- rendering ------------------------------------------------------------------------------

def _pp(value: float | None, spec: str = ".1f") -> str:
    return "n/a" if value is None else f"{format(value * 100, spec)} pp"


def render_text(r: dict[str, Any], shown: int = 20) -> str:
    """The report for people: each number with what it means, in words."""

    flips, corr = r["flip_rate"], r["correlation"]
    out = [f"waza noise: {len(r['files'])} results file(s), {r['tasks']} tasks x {r['trials_per_task']} "
           "trial(s) per task and file", ""]
    out += [f"Warning: {terminal_text(w)}" for w in r.get("warnings", ())] + ([""] if r.get("warnings") else [])
    out += ["Flip rate (how often a task's verdict differs)"]
    if flips["trials"] is None:
        out.append("  between trials: n/a (one graded trial per task: run with more trials or give two files)")
    else:
        out.append(f"  between trials: two trials of a task disagree {flips['trials'] * 100:.1f}% of the time; "
                   f"{flips['tasks_flipped']} of {flips['tasks_with_trial_pairs']} tasks flipped at least once")
    if flips["runs"] is not None:
        out.append(f"  between runs:   a task's status differs between two files {flips['runs'] * 100:.1f}% of the "
                   f"time; {flips['tasks_changed_between_runs']} of {flips['tasks_with_run_pairs']} tasks changed")
    out.append(f"  correlation of a run's trials (rho): {corr['value']:.2f} ({terminal_text(corr['note'])})")
    out += ["", "Between-run spread (two runs of this design, nothing changed)"]
    for key, label in (("pass_rate", "mean pass rate"), ("success_rate", "success rate (all trials pass)")):
        s = r["spread"][key]
        out.append(f"  {label}: sd {_pp(s['sd'])}; two runs differ by {s['aa_low'] * 100:+.1f} to "
                   f"{s['aa_high'] * 100:+.1f} pp 95% of the time")
    for seen in r["spread"]["observed"]:
        out.append(f"  observed {terminal_text(seen['file'])}: pass rate {seen['pass_rate'] * 100:.1f}%, "
                   f"success rate {seen['success_rate'] * 100:.1f}%")
    out += ["", _mde_line(r)]
    if "plan" in r:
        out += [""] + _plan_lines(r["plan"])
    out += [""] + _task_lines(r["per_task"], shown, terminal_text)
    return "\n".join(out) + "\n"


def _mde_line(r: dict[str, Any]) -> str:
    how = (f"(alpha {r['alpha']}, power {r['power']}, paired sign-flip test as in `waza gate --significance`, "
           f"{r['simulations']} simulations, seed {r['seed']})")
    if r["minimum_detectable_effect"] is None:
        return (f"Minimum detectable effect: none: this design cannot find even the largest possible drop with power "
                f"{r['power']} {how}; add tasks")
    return (f"Minimum detectable effect: a drop of {_pp(r['minimum_detectable_effect'])} in the mean pass rate {how}; "
            "a smaller change is within noise")


def _plan_lines(p: dict[str, Any]) -> list[str]:
    out = [f"Power planning: a drop of {p['effect_pct']:.1f} pp, power {p['power']}"]
    if p.get("note"):
        return out + [f"  not possible: {p['note']}"]
    if p["trials_needed"] is not None:
        out.append(f"  {p['trials_needed']} trial(s) per task with these {p['tasks']} tasks")
    else:
        best = max((c["power"] for c in p["curve"] if c["tasks"] == p["tasks"]), default=0.0)
        out.append(f"  no number of trials up to {p['max_trials']} gets there with these {p['tasks']} tasks "
                   f"(best power {best:.2f})")
        if p["tasks_needed"] is not None:
            out.append(f"  {p['tasks_needed']} tasks like the pilot's at {p['trials']} trial(s) per task")
        else:
            out.append(f"  nor {p['max_tasks']} tasks like the pilot's at {p['trials']} trial(s) per task")
    out.append("  power curve (tasks x trials: power): " + ", ".join(
        f"{c['tasks']}x{c['trials']}: {c['power']:.2f}" for c in p["curve"]))
    return out


def _task_lines(rows: list[dict[str, Any]], shown: int, clean: Any) -> list[str]:
    def key(row: dict[str, Any]) -> float:
        return max(row["trial_flip_rate"] or 0.0, row["run_flip_rate"] or 0.0)

    flaky = sorted((row for row in rows if key(row) > 0), key=key, reverse=True)
    out = [f"Tasks that flipped: {len(flaky)} of {len(rows)}"]
    if flaky:
        out.append(f"  {'task':<32} {'passed':>9}  {'trial flip':>10}  {'run flip':>8}")
    for row in flaky[:shown]:
        name = clean(row["display_name"])
        name = name[:29] + "..." if len(name) > 32 else name
        trial = "n/a" if row["trial_flip_rate"] is None else f"{row['trial_flip_rate'] * 100:.0f}%"
        run = "n/a" if row["run_flip_rate"] is None else f"{row['run_flip_rate'] * 100:.0f}%"
        out.append(f"  {name:<32} {row['passed']:>4}/{row['graded']:<4}  {trial:>10}  {run:>8}")
    if len(flaky) > shown:
        out.append(f"  ... and {len(flaky) - shown} more (--format json lists every task)")
    return out
