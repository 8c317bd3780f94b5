"""Price tables: what a run cost when its executor reported tokens (or AI credits) but no cost.

An agent that prints its own cost (Claude Code's ``total_cost_usd``) is believed
(``cost_source: "agent"``). Many report only tokens (Codex, Gemini CLI, the Copilot SDK's
per-model metrics) or AI credits (the Copilot SDK's ``totalNanoAiu``); for those the run's
``usage.cost_usd`` is computed from a price table and ``cost_source`` is ``"price_table"``,
so a budget (``--max-spend``) can count them. A model the table does not know gets
``cost_usd: null`` (never 0) and ``cost_unknown`` says why.

The table shipped in the package (``prices.json``) is GitHub's Copilot rate card (per-token
prices per model, default tier, and 1 AI credit = 0.01 USD), with the date it was read and its
source inside the file. ``--prices FILE`` (else ``.waza.yaml`` ``defaults.prices``) adds a
table of the same shape whose models take precedence; ``--prices none`` turns pricing off.

How tokens are priced (per model, USD per million tokens)::

    fresh input = input - cache reads   (when the provider counts cache reads inside input)
    cost = fresh input x input + cache reads x cached_input + cache writes x cache_write
           + output x output

``input_includes_cached`` per model says which convention its provider's usage follows
(OpenAI, Google: cached tokens are part of the prompt tokens; Anthropic: they are not).
``cache_write: null`` means the provider charges no separate cache-write price.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from waza_core.errors import WazaError

if TYPE_CHECKING:
    from waza_core.run.prepared import PreparedSuite
    from waza_core.run.setup import RunPreparer, RunSetup

#: the table shipped in the package
BUILTIN_FILE = Path(__file__).with_name("prices.json")
KIND = "waza.prices"
#: ``--prices none`` / ``defaults.prices: none``: no table at all
NONE = "none"
_PRICE_KEYS = ("input", "cached_input", "output", "cache_write")


def model_key(name: str) -> str:
    """The lookup key of a model name: ``Claude Sonnet 4.5``, ``claude-sonnet-4.5``,
    ``anthropic/claude-sonnet-4-5-20250929`` and ``claude-sonnet-4-5`` are one model.

    Lower case, a provider prefix (``x/``) dropped, every run of other characters one ``-``,
    and a trailing release date (``-20250929``, ``-2025-09-29``) or ``-preview``/``-latest``
    dropped."""
    key = name.strip().lower().rsplit("/", 1)[-1]
    key = re.sub(r"[^a-z0-9]+", "-", key).strip("-")
    key = re.sub(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$", "", key)
    return re.sub(r"-(?:preview|latest)$", "", key)


@attrs.frozen
class ModelPrice:
    """One model's prices, USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None
    input_includes_cached: bool = True

    def cost(self, usage: Mapping[str, Any]) -> tuple[float | None, str | None]:
        """(USD, None), or (None, why) when the usage cannot be priced."""
        tokens = {k: _count(usage.get(k)) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                                    "cache_write_tokens")}
        if any(v is None for v in tokens.values()):
            return None, "a token count is not a number"
        fresh, cached = tokens["input_tokens"], tokens["cache_read_tokens"]
        if cached and self.cached_input is None:
            return None, "the table has no cached-input price for this model"
        if self.input_includes_cached and cached <= fresh:
            fresh -= cached
        total = (fresh * self.input + cached * (self.cached_input or 0.0) + tokens["output_tokens"] * self.output
                 + tokens["cache_write_tokens"] * (self.cache_write or 0.0))
        return round(total / 1_000_000, 10), None


@attrs.frozen
class PriceTable:
    """A price table: per-model token prices and the USD value of one AI credit."""

    models: Mapping[str, ModelPrice]
    #: where the prices come from and when they were read (from the file)
    source: str = ""
    as_of: str = ""
    ai_credit_usd: float | None = None

    def price_of(self, model: str) -> ModelPrice | None:
        return self.models.get(model_key(model)) if model else None

    def merged(self, over: PriceTable) -> PriceTable:
        """This table with ``over``'s models (and credit value, when it has one) taking precedence."""
        return PriceTable(models={**self.models, **over.models},
                          source=f"{over.source} (over: {self.source})" if over.source else self.source,
                          as_of=over.as_of or self.as_of,
                          ai_credit_usd=over.ai_credit_usd if over.ai_credit_usd is not None else self.ai_credit_usd)


def apply(table: PriceTable, usage: dict[str, Any] | None, model: str) -> None:
    """Fill ``usage.cost_usd`` from ``table`` when the executor reported usage but no cost.

    AI credits (what Copilot bills) are converted first; otherwise the tokens are priced per
    model (``model_metrics``, when the executor attributed usage to models; else the run's
    ``model``). Any model the table lacks makes the cost ``null``: a partial sum would read as
    the whole bill."""
    if not usage or "cost_usd" in usage:
        return
    credits = usage.get("ai_credits")
    if table.ai_credit_usd is not None and credits is not None and _count(credits) is not None:
        usage.update(cost_usd=round(credits * table.ai_credit_usd, 10), cost_source="price_table")
        return
    per_model = usage.get("model_metrics")
    if isinstance(per_model, dict) and per_model:
        parts = [(str(name), m) for name, m in per_model.items() if isinstance(m, dict) and _has_tokens(m)]
    elif _has_tokens(usage):
        parts = [(model, usage)]
    else:
        return  # no tokens and no credits: nothing to price
    total = 0.0
    for name, counts in parts:
        price = table.price_of(name)
        if price is None:
            why = "the run names no model" if not name else f"model {name!r} is not in the price table"
            usage.update(cost_usd=None, cost_source="price_table", cost_unknown=why)
            return
        cost, why = price.cost(counts)
        if cost is None:
            usage.update(cost_usd=None, cost_source="price_table", cost_unknown=f"model {name!r}: {why}")
            return
        total += cost
    usage.update(cost_usd=round(total, 10), cost_source="price_table")


def _has_tokens(counts: Mapping[str, Any]) -> bool:
    return any(_count(counts.get(k)) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                               "cache_write_tokens"))


def _count(v: Any) -> float | None:
    if v is None:
        return 0
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        return None
    return v


# --- reading a table ---------------------------------------------------------------------

def builtin() -> PriceTable:
    """The table shipped in the package."""
    return read(BUILTIN_FILE)


def resolve(option: str | None, start: str | os.PathLike[str] | None = None) -> PriceTable | None:
    """The table of a run: built-in, plus ``--prices FILE`` (else ``.waza.yaml``
    ``defaults.prices``, a path relative to that file); ``none`` turns pricing off."""
    # deferred: waza_core.suite.project_config adds ~0.6 ms to importing this module
    from waza_core.suite.project_config import find, run_default

    where: Path | None = None
    value = option
    if value is None:
        value = run_default("prices", start)
        project = find(start) if value is not None else None
        if value is not None and project is not None and value != NONE:
            where = project.parent / value
    if value is None:
        return builtin()
    if value == NONE:
        return None
    return builtin().merged(read(where if where is not None else Path(value)))


def read(path: Path) -> PriceTable:
    """A table file (JSON, or YAML of the same shape); a bad one is a :class:`WazaError`
    naming file:line:col."""
    # deferred: waza_core.suite adds ~10.4 ms to importing this module
    from waza_core.suite import yamlio

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise WazaError(f"cannot read the price table {path}: {why}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yamlio.parse(text)
    except json.JSONDecodeError as exc:
        raise WazaError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except yamlio.YamlProblem as exc:
        raise WazaError(f"{path}:{exc.line}:{exc.col}: {exc.message}") from None
    return _table(data, path, text)


def _table(data: Any, path: Path, text: str) -> PriceTable:
    def bad(where: tuple, message: str) -> WazaError:
        # deferred: waza_core.suite adds ~10.4 ms to importing this module
        from waza_core.suite import yamlio

        spot = yamlio.locate(text, where) if where else None
        at = f"{path}:{spot[0]}:{spot[1]}" if spot else str(path)
        return WazaError(f"{at}: {message} (see docs/spend.md#price-tables)")

    if not isinstance(data, dict):
        raise bad((), "a price table is a mapping with 'kind: waza.prices' and 'models'")
    if data.get("kind") != KIND:
        raise bad(("kind",) if "kind" in data else (), f"kind must be {KIND!r}, got {data.get('kind')!r}")
    if data.get("currency", "USD") != "USD":
        raise bad(("currency",), f"only USD prices are read, got currency {data.get('currency')!r}")
    credit = data.get("ai_credit_usd")
    if credit is not None and _count(credit) is None:
        raise bad(("ai_credit_usd",), f"ai_credit_usd must be a number >= 0, got {credit!r}")
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise bad(("models",), "models must be a mapping of model name to prices")
    out: dict[str, ModelPrice] = {}
    for name, entry in models.items():
        out[model_key(str(name))] = _model(entry, ("models", name), bad)
    return PriceTable(models=out, source=str(data.get("source", "")), as_of=str(data.get("as_of", "")),
                      ai_credit_usd=credit)


def _model(entry: Any, where: tuple, bad) -> ModelPrice:
    if not isinstance(entry, dict):
        raise bad(where, "a model's prices are a mapping: input, output (cached_input, cache_write optional)")
    values: dict[str, Any] = {}
    for key in _PRICE_KEYS:
        v = entry.get(key)
        if v is None and key in ("input", "output"):
            raise bad(where, f"{key} (USD per million tokens) is required")
        if v is not None and _count(v) is None:
            raise bad(where + (key,), f"{key} must be a number >= 0 (USD per million tokens), got {v!r}")
        values[key] = None if v is None else float(v)
    flag = entry.get("input_includes_cached", True)
    if not isinstance(flag, bool):
        raise bad(where + ("input_includes_cached",), f"input_includes_cached must be true or false, got {flag!r}")
    return ModelPrice(input_includes_cached=flag, **values)


# --- the per-run preparer ----------------------------------------------------------------

def price_costs(prepared: PreparedSuite) -> RunPreparer | None:
    """The preparer that prices each run's usage (after the executor, before grading); None
    when pricing is off or the executor never reports usage (``Executor.reports_usage``)."""
    table = prepared.settings.prices
    if table is None or not getattr(prepared.executor, "reports_usage", True):
        return None

    def price(setup: RunSetup) -> None:
        model = setup.unit.model
        setup.collect_evidence(lambda evidence: apply(table, evidence.usage, model))

    return price
