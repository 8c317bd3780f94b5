"""``type: diff``: workspace files compared with snapshots (exact bytes) and fragments.

Each ``expected_files`` entry names a workspace file and a ``snapshot`` (its exact
expected bytes) and/or ``contains`` fragments: ``+text`` (or plain ``text``) must appear,
``-text`` must not (trimmed, substring of the whole file). Every entry has an implicit
"file exists and is readable" check; a missing file fails it and all its sub-checks.
Score = passed checks / checks, as in waza (Go).

``waza run --update-snapshots`` (or ``config.update_snapshots``) rewrites each snapshot
from the run's workspace instead of failing on a difference, atomically, and only inside
the suite's folder. Snapshot paths resolve against ``context_dir``; relative paths are
looked up in the working directory first (waza's rule), then in the suite folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from waza_core import (
    Grader,
    GraderError,
    GraderResult,
    GradingContext,
    PathEscape,
    go_trim_space,
    hookimpl,
    resolve_inside,
)

from ._files import go_error, locate, read_regular, write_atomic

SNAPSHOT_UPDATED, SNAPSHOT_CREATED, SNAPSHOT_UNCHANGED = "updated", "created", "unchanged"


class DiffGrader(Grader):
    name = "diff"
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["expected_files"],
        "properties": {
            "expected_files": {
                "type": "array",
                "minItems": 1,
                "description": "Workspace files to check.",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["path"],
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "description": "Workspace-relative file."},
                        "snapshot": {"type": "string",
                                     "description": "File holding the exact expected bytes (under context_dir)."},
                        "contains": {"type": "array", "items": {"type": "string"},
                                     "description": "Fragments: '+x' or 'x' must appear, '-x' must not."},
                    },
                },
            },
            "context_dir": {"type": "string", "description": "Folder that relative snapshot paths are under."},
            "update_snapshots": {"type": "boolean",
                                 "description": "Rewrite snapshots from the workspace (like --update-snapshots)."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.expected = [dict(ef) for ef in c["expected_files"]]
        self.context_dir = c.get("context_dir") or ""
        self.update = bool(c.get("update_snapshots"))
        self.total = sum(1 + (1 if ef.get("snapshot") else 0) + len(ef.get("contains") or ())
                         for ef in self.expected)

    def start(self, setup) -> None:
        if setup.update_snapshots:
            self.update = True

    @classmethod
    def check_config(cls, config):
        problems = []
        for i, ef in enumerate(config.get("expected_files") or ()):
            if not ef.get("snapshot") and not ef.get("contains"):
                problems.append((("expected_files", i),
                                 f"expected_files[{i}] ({ef['path']!r}) must have 'snapshot' or 'contains'"))
        return problems

    def grade(self, ctx: GradingContext) -> GraderResult:
        ws = ctx.workspace_dir
        if not ws:
            return self.result(0.0, False, "No workspace directory available for diff grading")
        files = self._resolve_all(ws)
        failures: list[str] = []
        updates: list[dict] = []
        for ef, target in zip(self.expected, files, strict=True):
            failures += self._check_file(ef, target, updates)
        score = 1.0 if self.total == 0 else (self.total - len(failures)) / self.total
        if failures:
            feedback = "; ".join(failures)
        elif self.update:
            counts = {s: sum(1 for u in updates if u["status"] == s)
                      for s in (SNAPSHOT_UPDATED, SNAPSHOT_CREATED, SNAPSHOT_UNCHANGED)}
            feedback = (f"All diff checks passed (snapshots: {counts[SNAPSHOT_UPDATED]} updated, "
                        f"{counts[SNAPSHOT_CREATED]} created, {counts[SNAPSHOT_UNCHANGED]} unchanged)")
        else:
            feedback = "All diff checks passed"
        summary = [{k: ef[k] for k in ("path", "snapshot", "contains") if ef.get(k)} for ef in self.expected]
        return self.result(score, not failures, feedback, expected_files=summary, failures=failures or None,
                           workspace_dir=os.fspath(ws), snapshot_updates=updates)

    def _resolve_all(self, ws: str) -> list[Path]:

        out = []
        for ef in self.expected:
            try:
                out.append(resolve_inside(ws, ef["path"]))
            except PathEscape as exc:
                raise GraderError(f"expected_files path {ef['path']!r} is refused: "
                                  f"{exc}; paths must stay inside the run's workspace", "path_escape") from None
        return out

    def _check_file(self, ef: dict, target: Path, updates: list[dict]) -> list[str]:
        rel = ef["path"]
        content, problem = read_regular(target)
        if problem is not None:
            out = [f"Expected file not found in workspace: {rel}"]
            if ef.get("snapshot"):
                out.append(f"Snapshot comparison skipped (file not found): {rel}")
            out += [f"Contains check skipped (file not found): {rel} \u2192 {c}" for c in ef.get("contains") or ()]
            return out
        failures = []
        if ef.get("snapshot"):
            failures += self._check_snapshot(ef, content, updates)
        failures += _check_contains(rel, ef.get("contains") or (), content)
        return failures

    def _check_snapshot(self, ef: dict, actual: bytes, updates: list[dict]) -> list[str]:
        rel, snap = ef["path"], ef["snapshot"]
        try:
            path = self._snapshot_path(snap)
        except ValueError as exc:
            return [f"Invalid snapshot file {snap} for {rel}: {exc}"]
        expected, problem = read_regular(path, open_label=f"open {path}", read_label=f"read {path}")
        if problem is not None and not (self.update and problem == "missing"):
            reason = f"open {path}: no such file or directory" if problem == "missing" else problem
            return [f"Failed to read snapshot file {snap} for {rel}: {reason}"]
        if problem is None and expected == actual:
            if self.update:
                updates.append(_update(rel, snap, SNAPSHOT_UNCHANGED, 0))
            return []
        if not self.update:
            return [f"File {rel} does not match snapshot {snap}"]
        try:
            self._write_snapshot(path, actual)
        except (OSError, ValueError) as exc:
            reason = go_error(exc) if isinstance(exc, OSError) else str(exc)
            return [f"Failed to write snapshot file {snap} for {rel}: {reason}"]
        if problem is None:
            updates.append(_update(rel, snap, SNAPSHOT_UPDATED, count_changed_lines(expected, actual)))
        else:
            updates.append(_update(rel, snap, SNAPSHOT_CREATED, count_changed_lines(b"", actual)))
        return []

    def _snapshot_path(self, snap: str) -> Path:
        """The snapshot file; ValueError when it would leave ``context_dir`` (as waza checks)."""
        if not self.context_dir:
            return locate(snap, self.suite)[0].absolute()
        base = locate(self.context_dir, self.suite, want_dir=True)[0].absolute()
        path = Path(snap) if os.path.isabs(snap) else base / snap
        try:
            real_base = base.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise ValueError(f"lstat {base}: {go_error(exc) if isinstance(exc, OSError) else exc}") from None
        real = Path(os.path.realpath(path))  # a link loop stops here; reading it then fails
        if real != real_base and not real.is_relative_to(real_base):
            raise ValueError("path escapes context directory")
        return path

    def _write_snapshot(self, path: Path, data: bytes) -> None:
        """Write a snapshot atomically, refusing any target outside the suite's folder."""
        if self.suite is None:
            raise ValueError("no suite folder is known, so waza will not write snapshots")
        root = Path(os.path.realpath(self.suite.dir))
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(root):
            raise ValueError(f"{real} is outside the suite folder {root}; waza writes snapshots only there")
        real.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(real, data)


def _check_contains(rel: str, fragments, content: bytes) -> list[str]:
    out = []
    for fragment in fragments:
        if not fragment:
            continue
        present, text = True, fragment
        if fragment[0] == "+":
            text = fragment[1:]
        elif fragment[0] == "-":
            present, text = False, fragment[1:]
        text = go_trim_space(text)
        if not text:
            continue
        found = text.encode("utf-8", "surrogatepass") in content
        if present and not found:
            out.append(f"File {rel} missing expected fragment: {text}")
        elif not present and found:
            out.append(f"File {rel} contains fragment that should be absent: {text}")
    return out


def _update(rel: str, snap: str, status: str, changed: int) -> dict:
    return {"path": rel, "snapshot": snap, "status": status, "lines_changed": changed}


def count_changed_lines(before: bytes, after: bytes) -> int:
    """Lines that differ by position (not a real diff), as waza counts them."""
    a = before.replace(b"\r\n", b"\n").split(b"\n")
    b = after.replace(b"\r\n", b"\n").split(b"\n")
    return sum(1 for i in range(max(len(a), len(b)))
               if (a[i] if i < len(a) else b"") != (b[i] if i < len(b) else b""))


@hookimpl
def waza_register_graders(register):
    register(DiffGrader)
