"""``schemaVersion``: waza's version policy for eval suites and results files.

Versions are ``MAJOR.MINOR`` (two non-negative integers, no patch). The rules, as in
waza (Go) ``internal/models/schema_version.go`` and ``spec.go``:

* A missing ``schemaVersion`` means the current version (:data:`CURRENT_EVAL`,
  :data:`CURRENT_RESULTS`).
* Any minor of the supported major is read, including minors newer than this waza
  knows (``"1.99"``): minors only ever add optional keys.
* Another major is refused, with a pointer to ``waza migrate <file>``.
* A *scenario* suite (one with a ``scenario:`` key) must say exactly ``"2.0"``; a
  ``"2.0"`` without ``scenario:`` is another major and is refused.
* Some eval keys need a minimum minor (:data:`EVAL_FEATURES`). The check uses the
  declared version, or the current one when none is declared; scenario suites pass
  every gate (2.0 is newer than all of them).

Everything here is pure: it takes values and returns problems, so the suite loader,
``waza migrate`` and the results reader share one policy.
"""

from __future__ import annotations

import attrs

#: the newest eval.yaml version this waza writes and understands
CURRENT_EVAL = "1.5"
#: the version of scenario suites (``scenario:`` key)
SCENARIO = "2.0"
#: the newest results.json version this waza writes
CURRENT_RESULTS = "1.8"
#: the one major version of legacy evals and of results files
SUPPORTED_MAJOR = 1

#: eval keys that need a minimum schemaVersion (legacy suites), as in waza (Go)
EVAL_FEATURES: dict[str, tuple[int, int]] = {
    "mcp_mocks": (1, 1),
    "adversarial": (1, 2),
    "command_mocks": (1, 3),
}


class VersionError(ValueError):
    """A schemaVersion that cannot be read or is not supported; the message says what to do."""


def parse(version: str) -> tuple[int, int]:
    """``"1.5"`` -> ``(1, 5)``; :class:`VersionError` for anything else."""
    parts = version.split(".")
    if len(parts) != 2 or not all(parts):
        raise VersionError("expected MAJOR.MINOR, e.g. \"1.5\"")
    for name, part in zip(("major", "minor"), parts, strict=True):
        if not part.isdigit() or not part.isascii():
            raise VersionError(f"{name} version must be a non-negative integer")
    return int(parts[0]), int(parts[1])


def as_text(value) -> str | None:
    """The declared version as text: YAML may give ``1.2`` as a number, which waza (Go)
    reads as the string ``"1.2"``. Callers pass the scalar's source text when they have it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@attrs.frozen
class EvalVersion:
    """The version an eval is read as."""

    #: what the file says (None when absent)
    declared: str | None
    #: what applies: the declared version, or :data:`CURRENT_EVAL`
    effective: str
    #: True for a scenario (2.0) suite
    scenario: bool

    @property
    def numbers(self) -> tuple[int, int]:
        return parse(self.effective)

    def allows(self, key: str) -> bool:
        """Whether an eval at this version may use ``key`` (see :data:`EVAL_FEATURES`)."""
        need = EVAL_FEATURES.get(key)
        return self.scenario or need is None or self.numbers >= need


def check_eval(declared: str | None, scenario: str | None = None) -> EvalVersion:
    """The version an eval.yaml is read as, or :class:`VersionError`.

    ``declared`` is the ``schemaVersion`` text and ``scenario`` the ``scenario`` text,
    each None when absent (a ``scenario:`` with a null value is absent, as in waza Go).
    """
    if scenario is not None:
        if not scenario.strip():
            raise VersionError("scenario must be a non-empty workflow identity (a name for the workflow "
                               "this suite tests)")
        if declared != SCENARIO:
            got = "no schemaVersion" if declared is None else f"schemaVersion {declared!r}"
            raise VersionError(f"scenario requires explicit schemaVersion \"{SCENARIO}\" (found {got}); "
                               f"add schemaVersion: \"{SCENARIO}\", or remove scenario: for a skill suite")
        return EvalVersion(declared, SCENARIO, True)
    if declared is None or not declared.strip():
        return EvalVersion(None, CURRENT_EVAL, False)
    try:
        major, _ = parse(declared)
    except VersionError as exc:
        raise VersionError(f"invalid schemaVersion {declared!r}: {exc}") from None
    if major != SUPPORTED_MAJOR:
        hint = (f"; schemaVersion \"{SCENARIO}\" is for scenario suites: add a scenario: key"
                if declared == SCENARIO else "")
        raise VersionError(
            f"schemaVersion {declared!r} (major {major}) is not supported: this waza reads eval schema "
            f"major {SUPPORTED_MAJOR} (current {CURRENT_EVAL}) and scenario suites ({SCENARIO}){hint}; "
            f"run \"waza migrate <file>\" to migrate the file")
    return EvalVersion(declared, declared, False)


def feature_problem(version: EvalVersion, key: str) -> str | None:
    """The message for ``key`` used below its minimum version, or None."""
    if version.allows(key):
        return None
    need = EVAL_FEATURES[key]
    return (f"{key} requires schemaVersion {need[0]}.{need[1]} or newer (this file says "
            f"{version.effective!r}); raise schemaVersion or run \"waza migrate <file>\"")


def check_results(declared) -> str:
    """The version a results file is read as (any 1.x, or current when absent).

    Raises :class:`VersionError` for a malformed version or another major.
    """
    if declared is None or (isinstance(declared, str) and not declared.strip()):
        return CURRENT_RESULTS
    if not isinstance(declared, str):
        raise VersionError(f"schemaVersion must be a string, got {declared!r}")
    try:
        major, _ = parse(declared)
    except VersionError as exc:
        raise VersionError(f"invalid schemaVersion {declared!r}: {exc}") from None
    if major != SUPPORTED_MAJOR:
        raise VersionError(
            f"results schemaVersion {declared!r} (major {major}) is not supported: this waza reads results "
            f"major {SUPPORTED_MAJOR} (current {CURRENT_RESULTS}); run \"waza migrate <file>\"")
    return declared
