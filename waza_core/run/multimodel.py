"""Multi-model runs: the suite once per model, one results file each, compared on the console.

As in waza (Go) ``cmd_run.go``: ``waza run --model a --model b`` runs the whole suite
for each model in turn (an A/B run and the hooks included); a model whose tasks fail
does not stop the others (the exit code is 1 at the end), an error (exit 2) does. With
``-o results.json`` each model's document goes to ``results_<model>.json``, the model
made safe for a file name (``/``, ``\\``, ``:`` and spaces become ``-``); a
comparison table follows the last run. waza for Python adds ``config.models: [a, b]``
(used when no ``--model`` is given) and, with ``--output-dir``, a file per model named
``<eval name>-<model>-<time>-<id>.json``.
"""

from __future__ import annotations

from pathlib import Path

from waza_core.errors import WazaError
from waza_core.model import Suite
from waza_core.results import significance as paired
from waza_core.results.model import ResultsDocument


def models_to_run(flags: list[str], suite: Suite) -> list[str]:
    """``--model`` values, else ``config.models``, else ``config.model``; duplicates are an error."""
    models = list(flags) or list(suite.config.models) or [suite.config.model]
    seen: set[str] = set()
    for m in models:
        if m in seen:
            raise WazaError(f"duplicate --model value: {m!r} (each model must be unique)")
        seen.add(m)
    return models


def sanitize(name: str) -> str:
    """waza (Go) ``sanitizePathSegment``: ``/ \\ : space`` -> ``-``."""
    for ch in "/\\: ":
        name = name.replace(ch, "-")
    return name


def per_model_path(output: Path, model: str) -> Path:
    """``results.json`` -> ``results_<model>.json`` (waza Go ``buildOutputPath``)."""
    return output.with_name(f"{output.stem}_{sanitize(model)}{output.suffix}")


def comparison_table(results: list[tuple[str, ResultsDocument]]) -> str:
    """The console comparison of a multi-model run, sorted by model (waza Go ``printModelComparison``)."""
    from waza_core.results.console import escape  # one model, one line

    rows = ["", "MODEL COMPARISON",
            f"  {'model':<24} {'score':>7} {'pass rate':>10} {'duration':>10} {'tokens':>10}"]
    for model, doc in sorted(results, key=lambda r: r[0]):
        s = doc.summary
        usage = s.usage if s is not None else None
        tokens = ""
        if usage:
            total = (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)
            tokens = f"{total:,}" if total else ""
        graded = s is not None and not doc.config.skip_graders  # --skip-graders: no score to compare
        score = f"{s.aggregate_score:.2f}" if graded else "-"
        rate = f"{s.success_rate * 100:.1f}%" if graded else "-"
        duration = f"{s.duration_ms / 1000:.1f}s" if s is not None else "-"
        rows.append(f"  {escape(model) or '(default)':<24} {score:>7} {rate:>10} {duration:>10} {tokens:>10}")
    return "\n".join(rows + significance_lines(results)) + "\n"


#: the level of the models' paired comparison (as ``waza compare``'s and an A/B run's)
ALPHA = 0.05


def significance_lines(results: list[tuple[str, ResultsDocument]]) -> list[str]:
    """Each model after the first against the first (run order), with the paired test of
    ``waza compare``, in the words every comparison uses. Nothing when the runs were not
    graded or their tasks were streamed to the files (a run too large to keep in memory:
    ``waza compare`` the files instead)."""
    from waza_core.results.console import escape  # as in comparison_table

    def comparable(doc: ResultsDocument) -> bool:
        return bool(doc.tasks) and not doc.config.skip_graders

    if len(results) < 2 or not comparable(results[0][1]):
        return []
    first, base = results[0][0], paired.statuses_of(results[0][1])
    lines = []
    for model, doc in results[1:]:
        if comparable(doc):
            sig = paired.compare(base, paired.statuses_of(doc), ALPHA)
            lines.append(f"  {escape(model) or '(default)'} vs {escape(first) or '(default)'}: "
                         f"{escape(paired.describe(sig))}")
    return lines
