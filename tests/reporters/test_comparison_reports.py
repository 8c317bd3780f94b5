"""Every place that shows a comparison words it the same way: the one line of
``describe_significance`` (verdict in words, mean change, interval, p-value) in the console
of an A/B run, its markdown and HTML reports, ``waza report``, ``waza gate`` (human, markdown,
GitHub Actions, JSON) and ``waza compare`` (table, markdown, JSON). Real runs, real files;
the HTML is read by parsing here and in a real browser in test_comparison_browser.py."""

from __future__ import annotations

import json

import pytest

from tests.reporters.conftest import json_islands, waza_ci
from tests.run.test_baseline_from import EVAL, TASKS
from waza_core import describe_significance, escape_markdown
from waza_core.results.gate import escape_actions_message

PLUGIN = "tests.suite.skill_agent"  # skill-echo: names its skill folders in its output


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def ab_run(tmp_path_factory):
    """A real A/B run of six tasks (each 0 % without the skill, 100 % with it), with its
    console output and its markdown and HTML reports."""
    root = tmp_path_factory.mktemp("ab")
    write(root / "suite" / "eval.yaml", EVAL)
    write(root / "suite" / "skills" / "demo" / "SKILL.md", "---\nname: demo\n---\n")
    for name, text in TASKS.items():
        write(root / "suite" / name, text)
    proc = waza_ci("run", str(root / "suite"), "--baseline", "-p", PLUGIN, "-o", str(root / "ab.json"),
                   "--reporter", f"markdown:{root / 'ab.md'}", "--reporter", f"html:{root / 'ab.html'}",
                   "--color", "never")
    assert proc.returncode == 0, proc.stderr.decode()
    return root, proc.stdout.decode()


def test_an_ab_run_words_its_comparison_the_same_in_console_markdown_and_html(ab_run):
    root, console = ab_run
    doc = json.loads((root / "ab.json").read_text("utf-8"))
    line = describe_significance(doc["skill_impact_significance"])
    assert line.startswith("Significance: significant improvement: mean task change +100.0 pp (95% CI")
    assert f"  {line}" in console
    md = (root / "ab.md").read_text("utf-8")
    assert "### Skill impact" in md and escape_markdown(line, 600) in md
    data = json.loads(json_islands((root / "ab.html").read_bytes())["waza-data"])
    impact = data["header"]["skill_impact"]
    assert impact["line"] == line and impact["verdict"] == "significant improvement"
    assert [(t["id"], t["baseline"], t["with"], t["delta"]) for t in impact["tasks"]] == \
        [(f"t{i}", 0.0, 1.0, 1.0) for i in range(1, 7)]
    # waza report of the saved file: the same bytes as the reporters of the run
    for flag, name in (("--markdown", "again.md"), ("--html", "again.html")):
        proc = waza_ci("report", str(root / "ab.json"), flag, str(root / name))
        assert proc.returncode == 0, proc.stderr.decode()
    assert (root / "again.md").read_bytes() == (root / "ab.md").read_bytes()
    again = json.loads(json_islands((root / "again.html").read_bytes())["waza-data"])
    assert again["header"]["skill_impact"] == impact


def test_a_results_file_without_a_comparison_has_no_impact_section(ci_results, tmp_path):
    proc = waza_ci("report", str(ci_results), "--markdown", str(tmp_path / "r.md"), "--html", str(tmp_path / "r.html"))
    assert proc.returncode == 0, proc.stderr.decode()
    assert "Skill impact" not in (tmp_path / "r.md").read_text("utf-8")
    assert json.loads(json_islands((tmp_path / "r.html").read_bytes())["waza-data"])["header"]["skill_impact"] is None


def test_gate_and_compare_word_the_comparison_the_same_in_every_format(ab_run, tmp_path):
    root, _ = ab_run
    doc = json.loads((root / "ab.json").read_text("utf-8"))
    base = tmp_path / "without.json"
    base.write_text(json.dumps(doc["baseline_outcome"]), "utf-8")
    cur = root / "ab.json"
    proc = waza_ci("gate", "--baseline", str(base), "--current", str(cur), "--significance", "0.05", "-f", "json")
    sig = json.loads(proc.stdout)["significance"]
    line = describe_significance(sig)
    assert sig["verdict"] == "significant improvement" and "95% CI +100.0 to +100.0" in line
    outputs = {fmt: waza_ci("gate", "--baseline", str(base), "--current", str(cur), "--significance", "0.05",
                            "-f", fmt).stdout.decode() for fmt in ("human", "markdown", "github-actions")}
    assert line in outputs["human"]
    assert escape_markdown(line) in outputs["markdown"]
    assert f"::notice title=Waza gate::{escape_actions_message(line)}" in outputs["github-actions"].splitlines()
    compare = json.loads(waza_ci("compare", str(base), str(cur), "-f", "json").stdout)
    assert describe_significance(compare["significance"]) == line  # the same test, the same words
    assert line in waza_ci("compare", str(base), str(cur)).stdout.decode()
    assert escape_markdown(line) in waza_ci("compare", str(base), str(cur), "-f", "markdown").stdout.decode()


def test_hostile_text_in_the_skill_impact_sections_stays_text(ab_run, tmp_path):
    root, _ = ab_run
    doc = json.loads((root / "ab.json").read_text("utf-8"))
    evil = "<script>alert(1)</script> | @team\n# heading"
    doc["baseline_from"] = {"file": evil, "sha256": "0" * 64, "part": "document", "eval_id": "<b>run</b>",
                            "timestamp": None, "tasks_compared": 6, "tasks_only_in_run": 0, "tasks_only_in_file": 0,
                            "compared_success_rate": 1.0, "compared_baseline_success_rate": 0.0,
                            "warnings": ["<img src=x onerror=alert(1)>"]}
    doc["tasks"][0]["display_name"] = "<b>bold</b> task"
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(doc), "utf-8")
    proc = waza_ci("report", str(path), "--markdown", str(tmp_path / "e.md"), "--html", str(tmp_path / "e.html"))
    assert proc.returncode == 0, proc.stderr.decode()
    md = (tmp_path / "e.md").read_text("utf-8")
    section = md[md.index("### Skill impact"):]
    assert "<script>" not in section and "<img" not in section and "<b>" not in section
    assert "&lt;script&gt;" in section and "@\u200bteam" in section and "\\| " in section
    assert "\n# heading" not in section  # a newline cannot start a heading
    page = (tmp_path / "e.html").read_bytes()
    assert b"<script>alert" not in page and b"<img src=x" not in page and b"<b>bold" not in page
    impact = json.loads(json_islands(page)["waza-data"])["header"]["skill_impact"]
    assert impact["source"]["file"] == evil and impact["tasks"][0]["name"] == "<b>bold</b> task"  # kept exactly


def test_a_multi_model_run_words_each_model_against_the_first_the_same(ab_run, tmp_path):
    root, _ = ab_run
    proc = waza_ci("run", str(root / "suite"), "-p", PLUGIN, "-m", "m1", "-m", "m2", "-o", str(tmp_path / "r.json"),
                   "--color", "never")
    assert proc.returncode == 0, proc.stderr.decode()
    first, second = (json.loads((tmp_path / f"r_{m}.json").read_text("utf-8")) for m in ("m1", "m2"))
    compare = json.loads(waza_ci("compare", str(tmp_path / "r_m1.json"), str(tmp_path / "r_m2.json"),
                                 "-f", "json").stdout)
    line = describe_significance(compare["significance"])
    assert compare["significance"]["verdict"] == "within noise"  # the same answers from both models
    out = proc.stdout.decode()
    assert "MODEL COMPARISON" in out and f"  m2 vs m1: {line}" in out
    assert second["summary"]["success_rate"] == first["summary"]["success_rate"] == 1.0
