"""``type: file``: files the agent must (not) leave in its workspace, and what they hold.

``must_exist`` / ``must_not_exist`` are workspace-relative paths; each
``content_patterns`` entry reads one file and checks RE2 patterns against it, with an
implicit "the file is readable" check (an unreadable file fails that check and every
pattern of the entry). Score = passed checks / checks, as in waza (Go).

A path that is absolute, contains ``..`` or leaves the workspace through a symbolic
link is a :class:`GraderError` (the run becomes ``error``): the grader refuses to look
outside the run's workspace. Only regular files are read, so a FIFO or device the agent
left behind cannot block or flood the grader.
"""

from __future__ import annotations

import os

from waza_core import (
    Grader,
    GraderError,
    GraderResult,
    GradingContext,
    PathEscape,
    RegexError,
    compile_regex,
    hookimpl,
    resolve_inside,
)

from ._files import go_error, read_regular

_PATHS = {"type": "array", "items": {"type": "string"}}
_PATTERNS = {"type": "array", "items": {"type": "string"}}


class FileGrader(Grader):
    name = "file"
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "must_exist": {**_PATHS, "description": "Workspace-relative paths that must exist after the run."},
            "must_not_exist": {**_PATHS, "description": "Workspace-relative paths that must not exist."},
            "content_patterns": {
                "type": "array",
                "description": "Files whose content must (not) match RE2 patterns.",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["path"],
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "description": "Workspace-relative file."},
                        "must_match": {**_PATTERNS, "description": "RE2 patterns that must match the content."},
                        "must_not_match": {**_PATTERNS, "description": "RE2 patterns that must not match."},
                    },
                },
            },
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)

        c = spec.config
        self.must_exist = list(c.get("must_exist") or ())
        self.must_not_exist = list(c.get("must_not_exist") or ())
        self.patterns = []
        for cp in c.get("content_patterns") or ():
            self.patterns.append((cp["path"], [(p, compile_regex(p)) for p in cp.get("must_match") or ()],
                                  [(p, compile_regex(p)) for p in cp.get("must_not_match") or ()]))
        self.total = len(self.must_exist) + len(self.must_not_exist) + sum(
            len(mm) + len(mnm) + 1 for _, mm, mnm in self.patterns)
        self._details = {
            "must_exist": list(c["must_exist"]) if "must_exist" in c else None,
            "must_not_exist": list(c["must_not_exist"]) if "must_not_exist" in c else None,
            "content_patterns": [dict(cp) for cp in c["content_patterns"]] if "content_patterns" in c else None,
        }

    @classmethod
    def check_config(cls, config):

        problems: list[tuple[tuple, str]] = []
        if not any(config.get(k) for k in ("must_exist", "must_not_exist", "content_patterns")):
            problems.append(((), "needs at least one path in must_exist, must_not_exist or content_patterns"))
        for i, cp in enumerate(config.get("content_patterns") or ()):
            # an entry with only a path is waza's "the file is readable" check
            for key in ("must_match", "must_not_match"):
                for j, pattern in enumerate(cp.get(key) or ()):
                    try:
                        compile_regex(pattern)
                    except RegexError as exc:
                        problems.append((("content_patterns", i, key, j),
                                         f"invalid {key} pattern {pattern!r} for file {cp['path']}: {exc.reason}"))
        return problems

    def grade(self, ctx: GradingContext) -> GraderResult:
        ws = ctx.workspace_dir
        if not ws:
            return self.result(0.0, False, "No workspace directory available for file grading")
        resolved = self._resolve_all(ws)
        failures: list[str] = []
        for rel in self.must_exist:
            problem = _stat(resolved[rel])
            if problem == "missing":
                failures.append(f"File must exist but not found: {rel}")
            elif problem:
                failures.append(f"Failed to check required file {rel}: statat {rel}: {problem}")
        for rel in self.must_not_exist:
            problem = _stat(resolved[rel])
            if problem is None:
                failures.append(f"File must not exist but found: {rel}")
            elif problem != "missing":
                failures.append(f"Failed to check forbidden file {rel}: statat {rel}: {problem}")
        for rel, must, must_not in self.patterns:
            failures.extend(self._content(rel, resolved[rel], must, must_not, os.path.join(ws, rel)))
        score = 1.0 if self.total == 0 else (self.total - len(failures)) / self.total
        feedback = "; ".join(failures) if failures else "All file checks passed"
        return self.result(score, not failures, feedback, **self._details, failures=failures or None,
                           workspace_dir=os.fspath(ws))

    def _resolve_all(self, ws: str) -> dict[str, str]:
        """Every configured path, resolved inside the workspace, before any check runs."""

        out: dict[str, str] = {}
        for key, rel in ([("must_exist", p) for p in self.must_exist]
                         + [("must_not_exist", p) for p in self.must_not_exist]
                         + [("content_patterns", p) for p, _, _ in self.patterns]):
            try:
                target = resolve_inside(ws, rel)
            except PathEscape as exc:
                raise GraderError(f"{key} path {rel!r} is refused: {exc}; "
                                  "paths must stay inside the run's workspace", "path_escape") from None
            if os.path.normpath(target) == os.path.realpath(ws):
                raise GraderError(f"{key} path {rel!r} names the workspace "
                                  "itself; name a file inside it", "path_escape")
            out[rel] = os.fspath(target)
        return out

    def _content(self, rel: str, path: str, must: list, must_not: list, joined: str) -> list[str]:
        # waza opens through os.Root ("openat <path>") and reads the file it named
        # "<workspace>/<path>"
        content, problem = read_regular(path, open_label=f"openat {rel}", read_label=f"read {joined}")
        if problem is not None:
            first = (f"File not found for content check: {rel}" if problem == "missing"
                     else f"Failed to read file {rel}: {problem}")
            # an unreadable file fails its implicit check and every pattern, as in waza
            return ([first]
                    + [f"File {rel} missing expected pattern (file not found): {p}" for p, _ in must]
                    + [f"File {rel} could not verify absence of pattern (file not found): {p}" for p, _ in must_not])
        text = content.decode("utf-8", "replace")
        out = [f"File {rel} missing expected pattern: {p}" for p, rx in must if not rx.search(text)]
        out += [f"File {rel} contains forbidden pattern: {p}" for p, rx in must_not if rx.search(text)]
        return out


def _stat(path: str) -> str | None:
    """None if the path exists (following links), "missing", or the error text."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return go_error(exc)
    return None


@hookimpl
def waza_register_graders(register):
    register(FileGrader)
