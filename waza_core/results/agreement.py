"""Judge agreement: how often an LLM judge agrees with itself (``waza grade --repeat K``).

A judge that is asked the same question K times about the same run should give the same
verdict K times. This module measures how far it does, per grader, from the K verdicts
of every run (the runs are the *units* of reliability data, the K judgments of one run
are its *values*; a judgment that errored or was not judged is a missing value):

- **percent agreement**: the share of pairs of verdicts on the same run that agree
  (Krippendorff's observed agreement ``A_o = 1 - D_o``, each run weighted by its number
  of verdicts);
- **Krippendorff's alpha** ``1 - D_o / D_e``: the agreement beyond what the verdicts'
  overall mix of values would give by chance. 1 is perfect, 0 is chance, below 0 is
  systematic disagreement. Nominal for pass/fail, interval for scores.

The formula is the coincidence-matrix form of Krippendorff, K. (2011), "Computing
Krippendorff's Alpha-Reliability", University of Pennsylvania, ScholarlyCommons
(https://repository.upenn.edu/asc_papers/43), and Hayes, A. F. & Krippendorff, K. (2007),
"Answering the call for a standard reliability measure for coding data", *Communication
Methods and Measures* 1(1) 77-89. It is computed with numpy (no maintained MIT-compatible
package exists: the ``krippendorff`` package on PyPI is GPL-3.0); the tests check it
against the worked examples of the 2011 paper. When every verdict has the same value,
``D_e = 0`` and alpha is undefined: it is reported as ``None`` with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

#: Krippendorff (2004, p. 241): rely on data with alpha >= 0.800; 0.667 is the lowest
#: value from which tentative conclusions may still be drawn
DEFAULT_MIN_ALPHA = 0.667
METHOD = ("Krippendorff's alpha over runs (units) x repeated judgments (values): nominal over "
          "pass/fail, interval over scores; percent agreement = share of agreeing pairs of "
          "verdicts on the same run")
#: at most this many runs whose verdicts split are listed in the JSON block
MAX_SPLIT_RUNS = 50
#: the bootstrap interval of alpha: resamples, the seed of every draw, the fewest runs
BOOTSTRAP_RESAMPLES = 2000
SEED = 20261204
MIN_INTERVAL_RUNS = 5


def value_counts(units: Iterable[Sequence[Any]]) -> tuple[list[Any], np.ndarray]:
    """(the sorted distinct values, ``counts[u][c]``: how often pairable unit u holds value c).

    ``units`` holds, per unit, its values (missing ones left out). A unit with fewer
    than two values is not pairable and is left out."""
    pairable = [list(u) for u in units if len(u) >= 2]
    values = sorted({v for u in pairable for v in u})
    index = {v: i for i, v in enumerate(values)}
    counts = np.zeros((len(pairable), len(values)))
    for row, unit in enumerate(pairable):
        for v in unit:
            counts[row, index[v]] += 1
    return values, counts


def coincidence_matrix(counts: np.ndarray) -> np.ndarray:
    """``o_ck``: over the units, the ordered pairs of values (c, k) from different
    judgments, each unit's pairs divided by ``m_u - 1`` (so each pairable value counts
    once in ``n``)."""
    if counts.shape[0] == 0:
        return np.zeros((counts.shape[1], counts.shape[1]))
    weighted = counts / (counts.sum(axis=1) - 1.0)[:, None]
    return weighted.T @ counts - np.diag(weighted.sum(axis=0))


def coincidences(units: Iterable[Sequence[Any]]) -> tuple[list[Any], np.ndarray]:
    """(the sorted distinct values, the coincidence matrix ``o_ck``) of reliability data."""
    values, counts = value_counts(units)
    return values, coincidence_matrix(counts)


def _delta2(values: list[Any], level: str) -> np.ndarray:
    """The squared difference function of Krippendorff (2011) for nominal or interval data."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "interval":
        x = np.asarray(values, dtype=float)
        return (x[:, None] - x[None, :]) ** 2
    raise ValueError(f"unknown level of measurement {level!r} (nominal or interval)")


def _alpha_of(o: np.ndarray, d2: np.ndarray) -> float | None:
    """alpha from a coincidence matrix; None when the expected disagreement is 0."""
    n = float(o.sum())
    n_c = o.sum(axis=1)
    expected = float((np.outer(n_c, n_c) * d2).sum())
    if n == 0 or expected == 0:
        return None
    return 1.0 - (n - 1.0) * float((o * d2).sum()) / expected


def alpha(units: Iterable[Sequence[Any]], level: str = "nominal") -> tuple[float | None, str | None]:
    """(Krippendorff's alpha, None), or (None, why it is undefined).

    ``units``: per unit (a run), its values (the verdicts of its repeated judgments),
    missing ones left out. ``level``: ``nominal`` (categories: pass/fail) or
    ``interval`` (numbers: scores)."""
    values, counts = value_counts(units)
    if counts.shape[0] == 0:
        return None, "no run has two verdicts to compare"
    if len(values) < 2:
        return None, f"every verdict was the same ({_show(values[0])}): alpha is undefined without variation"
    return _alpha_of(coincidence_matrix(counts), _delta2(values, level)), None


def alpha_interval(units: Iterable[Sequence[Any]], level: str = "nominal", resamples: int = BOOTSTRAP_RESAMPLES,
                   confidence: float = 0.95) -> tuple[float, float] | None:
    """A seeded percentile bootstrap interval of alpha, resampling whole units (runs) with
    replacement: the runs are the sample, so the interval says how much alpha would move
    on other runs like these. None with fewer than :data:`MIN_INTERVAL_RUNS` pairable runs,
    or when alpha is undefined in more than a tenth of the resamples (too little variation
    to say)."""
    values, counts = value_counts(units)
    if counts.shape[0] < MIN_INTERVAL_RUNS or len(values) < 2:
        return None
    d2 = _delta2(values, level)
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, counts.shape[0], size=(resamples, counts.shape[0]))
    found = [a for a in (_alpha_of(coincidence_matrix(counts[p]), d2) for p in picks) if a is not None]
    if len(found) < 0.9 * resamples:
        return None
    low, high = np.quantile(found, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def observed_agreement(units: Iterable[Sequence[Any]]) -> float | None:
    """The share of agreeing pairs of values within the units (``A_o``); None without pairs."""
    _, o = coincidences(units)
    n = float(o.sum())
    return float(np.trace(o)) / n if n else None


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    return f"{value:g}" if isinstance(value, float) else str(value)


def grader_agreement(gtype: str, runs: list[dict[str, Any]], min_alpha: float) -> dict[str, Any]:
    """The agreement block of one judge grader.

    ``runs``: per graded run ``{"task", "run", "verdicts": [{"passed", "score"} or
    {"error"}]}``, the K judgments in order."""
    passed_units = [[j["passed"] for j in r["verdicts"] if "error" not in j] for r in runs]
    score_units = [[float(j["score"]) for j in r["verdicts"] if "error" not in j] for r in runs]
    nominal, why = alpha(passed_units, "nominal")
    interval_ci = alpha_interval(passed_units, "nominal") if nominal is not None else None
    interval, score_why = alpha(score_units, "interval")
    agreement = observed_agreement(passed_units)
    pairable = [u for u in passed_units if len(u) >= 2]
    split = [{"task": r["task"], "run": r["run"], "passes": sum(u), "fails": len(u) - sum(u)}
             for r, u in zip(runs, passed_units, strict=True) if len(set(u)) > 1]
    unstable = nominal is not None and nominal < min_alpha
    out: dict[str, Any] = {
        "type": gtype,
        "runs": len(runs),
        "runs_compared": len(pairable),
        "runs_unanimous": sum(1 for u in pairable if len(set(u)) == 1),
        "judgments": sum(len(r["verdicts"]) for r in runs),
        "judgment_errors": sum(1 for r in runs for j in r["verdicts"] if "error" in j),
        "percent_agreement": agreement,
        "alpha": nominal,
        "alpha_reason": why,
        "alpha_ci": list(interval_ci) if interval_ci is not None else None,
        "score_alpha": interval,
        "score_alpha_reason": score_why,
        "unstable": unstable,
        "split_runs": split[:MAX_SPLIT_RUNS],
    }
    if len(split) > MAX_SPLIT_RUNS:
        out["split_runs_left_out"] = len(split) - MAX_SPLIT_RUNS
    return out


def agreement_block(repeat: int, min_alpha: float, graders: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The results file's ``judge_agreement`` object (see docs/statistics.md)."""
    return {
        "repeat": repeat,
        "min_alpha": min_alpha,
        "method": METHOD,
        "graders": graders,
        "unstable": sorted(name for name, g in graders.items() if g.get("unstable")),
    }


# -- words for the reports ---------------------------------------------------------------


def _fmt(value: Any, digits: int = 3) -> str:
    return f"{value:.{digits}f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "n/a"


def grader_line(name: str, g: dict[str, Any], min_alpha: Any) -> str:
    """One grader's agreement in one line of plain text (console and markdown)."""
    agreement = g.get("percent_agreement")
    shown = f"{agreement * 100:.1f}%" if isinstance(agreement, (int, float)) else "n/a"
    alpha_text = _fmt(g.get("alpha"))
    if g.get("alpha") is None and g.get("alpha_reason"):
        alpha_text += f" ({g['alpha_reason']})"
    ci = g.get("alpha_ci")
    if isinstance(ci, list) and len(ci) == 2:
        alpha_text += f" (95% CI {_fmt(ci[0])} to {_fmt(ci[1])})"
    verdict = f"UNSTABLE (alpha below {_fmt(min_alpha)})" if g.get("unstable") else "stable"
    if g.get("runs_compared", 0) == 0:
        verdict = "not measured"
    return (f"{name}: agreement {shown}, alpha {alpha_text}, score alpha {_fmt(g.get('score_alpha'))}; "
            f"{g.get('runs_unanimous', 0)}/{g.get('runs_compared', 0)} run(s) unanimous, "
            f"{g.get('judgment_errors', 0)} judgment error(s): {verdict}")


def summary_lines(block: Any) -> list[str]:
    """The ``judge_agreement`` block as plain text lines; [] when there is none."""
    if not isinstance(block, dict) or not isinstance(block.get("graders"), dict):
        return []
    head = f"JUDGE AGREEMENT ({block.get('repeat')} judgments per run, stable at alpha >= " \
           f"{_fmt(block.get('min_alpha'))})"
    graders = block["graders"]
    if not graders:
        return [head, "  no prompt (judge) grader in the graded tasks: nothing was repeated"]
    return [head] + [f"  {grader_line(name, g, block.get('min_alpha'))}"
                     for name, g in graders.items() if isinstance(g, dict)]


def unstable_warning(name: str, block: dict[str, Any]) -> str:
    """The warning for a judge flagged unstable."""
    g = block["graders"][name]
    agreement = g.get("percent_agreement")
    shown = f"{agreement * 100:.1f}%" if isinstance(agreement, (int, float)) else "n/a"
    return (f"judge {name!r} is unstable: alpha {_fmt(g.get('alpha'))} < {_fmt(block.get('min_alpha'))} "
            f"(agreement {shown} over {g.get('runs_compared', 0)} run(s)); its verdicts are not reliable: "
            "sharpen its criteria or use a stronger judge model")
