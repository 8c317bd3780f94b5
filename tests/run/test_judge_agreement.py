"""``waza grade --repeat K``: judges asked K times, their agreement recorded and reported.

The judges are real subprocesses (examples/judge-agreement/judge/moody_judge.py through the
``cli`` executor): a steady one, a seeded coin flip and a scripted one, so every verdict,
and so every agreement figure, is known in advance. Nothing here calls a model.
"""

from __future__ import annotations

import json
import random
import shutil
import sys

import pytest

from tests.conftest import REPO
from tests.inprocess import run_waza_in_process as run_waza

MOODY = REPO / "examples" / "judge-agreement" / "judge" / "moody_judge.py"
COUNTER = "import os, sys\nopen(os.path.join(os.path.dirname(__file__), 'program-calls'), 'a').write('x\\n')\n"
TASKS = {"hello": "Say hello to the user.", "bye": "Say goodbye to the user."}


def judge(name: str, *mode: str) -> dict:
    command = [sys.executable, "{suite_dir}/moody_judge.py", "--prompt-file", "{prompt_file}", *mode]
    return {"type": "prompt", "name": name,
            "config": {"prompt": "It must say hello.",
                       "judge": {"executor": "cli", "options": {"command": command, "output": "text"}}}}


def make_suite(root, graders: list, trials: int = 2):
    """A mock-agent suite with the given graders, run once with --skip-graders: (eval.yaml, runs.json)."""
    (root / "tasks").mkdir(parents=True)
    shutil.copy(MOODY, root / "moody_judge.py")
    (root / "count.py").write_text(COUNTER)
    doc = {"name": "agreement", "skill": "greeter",
           "config": {"executor": "mock", "trials_per_task": trials, "timeout_seconds": 60},
           "graders": graders, "tasks": ["tasks/*.yaml"]}
    (root / "eval.yaml").write_text(json.dumps(doc))
    for task_id, prompt in TASKS.items():
        (root / "tasks" / f"{task_id}.yaml").write_text(json.dumps({"id": task_id, "inputs": {"prompt": prompt}}))
    runs = root / "runs.json"
    ran = run_waza("run", str(root / "eval.yaml"), "--skip-graders", "-o", str(runs), "-q")
    assert ran.returncode == 0, ran.stderr.decode()
    return root / "eval.yaml", runs


COUNTING = {"type": "program", "name": "counted",
            "config": {"command": sys.executable, "args": ["{suite_dir}/count.py"]}}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Four runs (2 tasks x 2 trials) graded with --repeat 3 by a deterministic program grader
    and three judges: steady, a seeded coin, and one scripted to split every run 2:1."""
    root = tmp_path_factory.mktemp("judges") / "suite"
    graders = [COUNTING, judge("steady", "--mode", "steady"),
               judge("coin", "--mode", "coin", "--seed", "11", "--state", "{suite_dir}/coin-calls"),
               judge("split", "--mode", "script", "--verdicts", "PPF,FFP,PFP,FPF",
                     "--state", "{suite_dir}/split-calls")]
    eval_yaml, runs = make_suite(root, graders)
    out = root / "graded.json"
    proc = run_waza("grade", str(eval_yaml), "-r", str(runs), "--repeat", "3", "-o", str(out), "--workspace", str(root))
    return root, proc, json.loads(out.read_text())


def test_deterministic_graders_are_graded_once_and_judges_k_times(graded):
    root, proc, doc = graded
    assert proc.returncode == 0, proc.stderr.decode()
    assert (root / "program-calls").read_text().count("x") == 4  # one call per run, not three
    assert (root / "split-calls").read_text().strip() == "12"  # 4 runs x 3 judgments
    run = doc["tasks"][0]["runs"][0]
    assert "judge_repeats" not in run["validations"]["counted"]["details"]
    assert len(run["validations"]["steady"]["details"]["judge_repeats"]) == 3


def test_a_stable_judge_gets_alpha_and_agreement_one(graded):
    _, _, doc = graded
    steady = doc["judge_agreement"]["graders"]["steady"]
    assert (steady["alpha"], steady["percent_agreement"], steady["unstable"]) == (1.0, 1.0, False)
    assert (steady["runs_compared"], steady["runs_unanimous"], steady["judgments"]) == (4, 4, 12)


def test_the_scripted_judge_gives_the_hand_computed_figures(graded):
    _, _, doc = graded
    split = doc["judge_agreement"]["graders"]["split"]
    # PPF, FFP, PFP, FPF: alpha = -2/9, agreement 1/3 (see tests/results/test_agreement.py)
    assert split["alpha"] == pytest.approx(-2 / 9)
    assert split["percent_agreement"] == pytest.approx(1 / 3)
    assert split["unstable"] is True and split["runs_unanimous"] == 0
    # the run's grade is the first judgment: P, F, P, F over the four runs
    firsts = [r["validations"]["split"]["passed"] for t in doc["tasks"] for r in t["runs"]]
    assert firsts == [True, False, True, False]


def test_a_coin_flip_judge_is_flagged_unstable(graded):
    _, proc, doc = graded
    coin = doc["judge_agreement"]["graders"]["coin"]
    # the seeded coin of moody_judge.py, call n: random.Random(f"11:{n}").random() < 0.5
    expected = [random.Random(f"11:{n}").random() < 0.5 for n in range(12)]
    seen = [j["passed"] for t in doc["tasks"] for r in t["runs"]
            for j in r["validations"]["coin"]["details"]["judge_repeats"]]
    assert seen == expected
    assert coin["unstable"] is True and coin["alpha"] < 0.667
    assert doc["judge_agreement"]["unstable"] == ["coin", "split"]
    err = proc.stderr.decode()
    assert "JUDGE AGREEMENT (3 judgments per run, stable at alpha >= 0.667)" in err
    assert "waza: warning: judge 'coin' is unstable: alpha" in err
    assert json.loads(proc.stdout)["judge_agreement"] == doc["judge_agreement"]


def test_the_graded_file_is_valid_and_reports_show_the_agreement(graded):
    import jsonschema

    root, _, doc = graded
    schema = json.loads((REPO / "waza_core" / "schemas" / "results.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    md, html = root / "r.md", root / "r.html"
    proc = run_waza("report", str(root / "graded.json"), "--markdown", str(md), "--html", str(html))
    assert proc.returncode == 0, proc.stderr.decode()
    text = md.read_text()
    assert "### Judge agreement" in text and "| coin | prompt |" in text and "⚠️ unstable" in text
    page = html.read_text()
    data = json.loads(page.split('<script id="waza-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    coin = [g for g in data["header"]["judge_agreement"]["graders"] if g["name"] == "coin"]
    assert coin and coin[0]["unstable"] is True and "function judgeAgreement" in page


@pytest.mark.browser
def test_the_html_report_shows_the_judge_agreement_table_in_a_browser(graded):
    from tests.reporters.browser import open_report

    root, _, _ = graded
    html = root / "browser.html"
    assert run_waza("report", str(root / "graded.json"), "--html", str(html)).returncode == 0
    with open_report(html) as opened:
        rows = opened.page.locator("#judge-agreement tbody tr")
        assert rows.count() == 3
        text = [rows.nth(i).inner_text().split("\t") for i in range(3)]
        assert [t[0] for t in text] == ["steady", "coin", "split"]
        assert text[0][2:4] == ["100.0%", "1.000"] and text[0][-1].strip() == "stable"
        assert text[2][2:4] == ["33.3%", "-0.222"] and text[2][-1].strip() == "unstable"
        assert opened.errors == []


def test_all_identical_verdicts_report_agreement_one_and_alpha_null_with_the_reason(tmp_path):
    eval_yaml, runs = make_suite(tmp_path / "s", [judge("always", "--mode", "script", "--verdicts", "P",
                                                        "--state", "{suite_dir}/calls")], trials=1)
    proc = run_waza("grade", str(eval_yaml), "-r", str(runs), "--repeat", "2")
    assert proc.returncode == 0, proc.stderr.decode()
    g = json.loads(proc.stdout)["judge_agreement"]["graders"]["always"]
    assert (g["percent_agreement"], g["alpha"], g["unstable"]) == (1.0, None, False)
    assert g["alpha_reason"] == "every verdict was the same (pass): alpha is undefined without variation"
    assert "alpha n/a (every verdict was the same (pass)" in proc.stderr.decode()


def test_without_a_judge_grader_nothing_is_repeated_and_it_says_so(tmp_path):
    eval_yaml, runs = make_suite(tmp_path / "s", [COUNTING], trials=1)
    proc = run_waza("grade", str(eval_yaml), "-r", str(runs), "--repeat", "3", "--workspace", str(tmp_path))
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["judge_agreement"]["graders"] == {}
    assert "no prompt (judge) grader in the graded tasks: nothing was repeated" in proc.stderr.decode()
    assert (tmp_path / "s" / "program-calls").read_text().count("x") == 2


@pytest.mark.parametrize("args,message", [
    (["--repeat", "1"], "--repeat 1: give 2 or more judgments per run"),
    (["--repeat", "0"], "--repeat 0: give 2 or more judgments per run"),
    (["--repeat", "3", "--min-agreement", "1.5"], "--min-agreement 1.5: Krippendorff's alpha lies between"),
])
def test_bad_repeat_options_are_exit_2_with_a_clear_message(tmp_path, args, message):
    (tmp_path / "runs.json").write_text('{"tasks": []}')
    (tmp_path / "eval.yaml").write_text("name: x\nskill: y\nconfig: {executor: mock}\ntasks: []\n")
    proc = run_waza("grade", str(tmp_path / "eval.yaml"), "-r", str(tmp_path / "runs.json"), *args)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert message in err and "Traceback" not in err


def test_a_judge_that_cannot_judge_is_not_measured_never_stable(tmp_path, registry):
    """The mock executor as judge answers no prompt: every judgment is a missing value."""
    from waza_core.results.agreement import summary_lines
    from waza_core.run.engine import Engine, RunOptions
    from waza_core.run.judge_agreement import JudgeRepeats
    from waza_core.run.regrade import regrade
    from waza_core.suite.load import load_suite

    root = tmp_path / "s"
    (root / "tasks").mkdir(parents=True)
    (root / "eval.yaml").write_text(json.dumps({
        "name": "mute", "skill": "s", "config": {"executor": "mock", "trials_per_task": 2},
        "graders": [{"type": "prompt", "name": "mute", "config": {"prompt": "It must say hello."}}],
        "tasks": ["tasks/*.yaml"]}))
    (root / "tasks" / "a.yaml").write_text('{"id": "a", "inputs": {"prompt": "say hello"}}')
    suite = load_suite(root / "eval.yaml", registry)
    runs = Engine(suite, registry, RunOptions(skip_graders=True)).run()
    report = regrade(suite, registry, runs, judges=JudgeRepeats(3))
    g = report.judge_agreement["graders"]["mute"]
    assert (g["runs"], g["runs_compared"], g["judgments"], g["judgment_errors"]) == (2, 0, 6, 6)
    assert (g["percent_agreement"], g["alpha"], g["unstable"]) == (None, None, False)
    assert g["alpha_reason"] == "no run has two verdicts to compare"
    assert summary_lines(report.judge_agreement)[1].endswith(": not measured")
    assert report.outcome.extra["judge_agreement"] == report.summary["judge_agreement"] == report.judge_agreement


def test_the_example_prints_what_its_readme_says(tmp_path):
    """examples/judge-agreement, run in a copy (its judge writes a call counter beside eval.yaml)."""
    example = tmp_path / "judge-agreement"
    shutil.copytree(REPO / "examples" / "judge-agreement", example,
                    ignore=shutil.ignore_patterns(".judge-calls", "runs.json", "graded.json", "summary.json"))
    assert run_waza("run", "eval.yaml", "--skip-graders", "-o", "runs.json", "-q", cwd=example).returncode == 0
    proc = run_waza("grade", "eval.yaml", "-r", "runs.json", "--repeat", "5", "-o", "graded.json", cwd=example)
    assert proc.returncode == 0, proc.stderr.decode()
    readme = (example / "README.md").read_text()
    for line in proc.stderr.decode().splitlines():
        assert line in readme, line
    assert run_waza("grade", "eval.yaml", "-r", "runs.json", "--repeat", "1", cwd=example).returncode == 2


def test_markdown_escapes_hostile_grader_names_and_survives_odd_blocks():
    from waza_core.results.agreement import agreement_block, grader_agreement
    from waza_reporters.markdown import judge_agreement_lines

    runs = [{"task": "t", "run": 1, "verdicts": [{"passed": True, "score": 1.0}, {"passed": False, "score": 0.0}]}]
    block = agreement_block(2, 0.667, {"<b>x</b> | @octocat": grader_agreement("prompt", runs, 0.667)})
    row = judge_agreement_lines(block)[-1]
    assert "<b>" not in row and "\\|" in row and "@\u200boctocat" in row
    assert judge_agreement_lines(None) == [] and judge_agreement_lines({"graders": []}) == []
    assert judge_agreement_lines({"graders": {"j": "not an object"}})[-1].startswith("_No prompt")
