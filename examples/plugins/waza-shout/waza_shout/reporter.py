"""``--reporter tsv``: one tab-separated line per task (id, status, score), for spreadsheets."""

from waza_core import Reporter, hookimpl


class TsvReporter(Reporter):
    name = "tsv"
    summary = "Tab-separated values: one line per task"
    suffix = ".tsv"
    option_help = {"header": "true or false: write a header line first (default true)."}

    def check_options(self):
        problems = super().check_options()  # unknown keys
        try:
            self.option_flag("header", default=True)
        except ValueError as exc:  # checked before the run, not halfway through the report
            problems.append(str(exc))
        return problems

    def write(self, results, out):
        if self.option_flag("header", default=True):
            out.write(b"task\tstatus\tscore\n")
        for task in results.tasks():
            score = (task.get("stats") or {}).get("avg_score", 0.0)
            cells = [str(task.get("test_id", "")), str(task.get("status", "")), f"{score:.3f}"]
            line = "\t".join(c.replace("\t", " ").replace("\n", " ") for c in cells)
            out.write(line.encode("utf-8") + b"\n")


@hookimpl
def waza_register_reporters(register):
    register(TsvReporter)
