"""What ``waza run`` shows a person: a progress bar on a terminal, plain per-task lines
otherwise (both on stderr), and a summary with the failing graders' feedback."""

from __future__ import annotations

import sys
from typing import Any

MARK = {"passed": "✓", "failed": "✗", "error": "!", "n/a": "-"}


class Reporter:
    def __init__(self, quiet: bool = False, stream=None) -> None:
        self.quiet = quiet
        self.err = stream or sys.stderr
        self.progress = None
        self.bar = None

    def start(self, suite, engine) -> None:
        if self.quiet:
            return
        self.err.write(f"waza: running {suite.name!r} ({len(engine.tasks)} task(s) x {engine.trials} trial(s)) "
                       f"with executor {engine.executor_name!r}, model {engine.model or '(default)'!r}\n")
        if self.err.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), console=Console(file=self.err), transient=True)
            self.progress.start()
            self.bar = self.progress.add_task("tasks", total=len(engine.tasks))

    def task_done(self, index: int, total: int, entry: dict[str, Any]) -> None:
        if self.quiet:
            return
        if self.progress is not None:
            self.progress.update(self.bar, completed=index)
            return
        score = (entry.get("stats") or {}).get("avg_score")
        shown = f" score {score:.2f}" if score is not None else ""
        self.err.write(f"{MARK.get(entry['status'], '?')} [{index}/{total}] {entry['display_name']} "
                       f"({entry['status']}{shown})\n")

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()

    def summary(self, outcome: dict[str, Any], target) -> None:
        if self.quiet:
            return
        out = sys.stdout
        s = outcome["summary"]
        lines = [
            "",
            f"RESULTS  {outcome['eval_name']}" + ("  (INCOMPLETE)" if outcome.get("incomplete") else ""),
            f"  tasks {s['total_tests']}: {s['succeeded']} passed, {s['failed']} failed, "
            f"{s['errors']} errors, {s['skipped']} skipped",
            f"  success rate {s['success_rate'] * 100:.1f}%   aggregate score {s['aggregate_score']:.3f}   "
            f"weighted {s['weighted_score']:.3f}   duration {s['duration_ms']} ms",
        ]
        if "cached_runs" in s:
            lines.append(f"  {s['cached_runs']} run(s) from the result cache")
        problems = [t for t in outcome["tasks"] if t["status"] in ("failed", "error")]
        if problems:
            lines.append("")
            lines.append("FAILED OR ERRORED TASKS")
            for t in problems[:50]:
                lines.append(f"  {MARK[t['status']]} {t['test_id']} ({t['status']})")
                for line in _feedback(t)[:10]:
                    lines.append(f"      {line}")
            if len(problems) > 50:
                lines.append(f"  ... and {len(problems) - 50} more (see the results file)")
        if target is not None:
            lines.append(f"\nresults: {target}")
        out.write("\n".join(lines) + "\n")


def _feedback(task: dict) -> list[str]:
    seen, out = set(), []
    for run in task["runs"]:
        if run.get("error_msg") and run["error_msg"] not in seen:
            seen.add(run["error_msg"])
            out.append(f"run {run['run_number']}: error: {run['error_msg']}")
        for name, v in (run.get("validations") or {}).items():
            if not v["passed"] and (name, v["feedback"]) not in seen:
                seen.add((name, v["feedback"]))
                out.append(f"{name}: {v['feedback']}")
    return out
