"""``waza_core.testing``: the helpers plugin authors test their plugins with."""

from __future__ import annotations

import json

import pytest

from waza_core import (
    ExecutorError,
    Grader,
    GraderError,
    GraderSetup,
    Reporter,
    RunEvidence,
    SuiteError,
    WazaError,
    hookimpl,
    testing,
)


class Shout(Grader):
    """Passes when the output has no lowercase letter."""

    name = "shout"
    config_schema = {"type": "object", "additionalProperties": False,
                     "properties": {"min_length": {"type": "integer", "minimum": 0}}}

    @classmethod
    def check_config(cls, config):
        return [(("min_length",), "min_length above 100 makes no sense")] if config.get("min_length", 0) > 100 else []

    def grade(self, ctx):
        text = ctx.evidence.output
        if len(text) < self.spec.config.get("min_length", 0):
            raise GraderError("output too short to judge", "too_short")
        ok = not any(c.islower() for c in text)
        return self.result(1.0 if ok else 0.0, ok, "all caps" if ok else "has lowercase letters")


class FileCheck(Grader):
    name = "file_check"

    def grade(self, ctx):
        from pathlib import Path

        found = (Path(ctx.workspace_dir) / "out.txt").read_text() if ctx.workspace_dir else None
        return self.result(float(found == "done\n"), found == "done\n", f"out.txt: {found!r}")


class Started(Grader):
    """Records start/close, to check grade() calls them like the run loop does."""

    name = "started"
    log: list = []

    def start(self, setup):
        Started.log.append(("start", setup.judge_model))

    def close(self):
        Started.log.append(("close",))

    def grade(self, ctx):
        return self.result(1.0, True, f"baseline={ctx.baseline_output}")


# -- grade -------------------------------------------------------------------------------

def test_grade_an_output():
    assert testing.grade(Shout, "HELLO").passed is True
    result = testing.grade(Shout, "Hello", name="caps", weight=2.0)
    assert (result.passed, result.score, result.feedback) == (False, 0.0, "has lowercase letters")
    assert (result.identifier, result.type, result.weight) == ("caps", "shout", 2.0)


def test_grade_a_builtin_by_type_name():
    result = testing.grade("text", "the answer is 42", config={"contains": ["42"]})
    assert result.passed is True and result.type == "text"
    assert testing.grade("text", "nothing", config={"contains": ["42"]}).passed is False


def test_grade_checks_the_config_like_load_time():
    with pytest.raises(SuiteError) as info:
        testing.grade(Shout, "X", config={"min_lenght": 3})
    assert "unknown key 'min_lenght' (did you mean 'min_length'?)" in str(info.value)
    assert testing.config_problems(Shout, {"min_length": 500}) == [
        "config.min_length: min_length above 100 makes no sense"]
    assert testing.config_problems(Shout, {"min_length": 5}) == []
    assert testing.config_problems("text", {"contains": "x"})  # a string where a list is wanted


def test_grade_lets_a_grader_error_through():
    with pytest.raises(GraderError) as info:
        testing.grade(Shout, "HI", config={"min_length": 5})
    assert info.value.kind == "too_short"


def test_grade_with_workspace_files_and_evidence(tmp_path):
    assert testing.grade(FileCheck, workspace={"out.txt": "done\n"}).passed is True
    assert testing.grade(FileCheck, workspace={"out.txt": "nope"}).feedback == "out.txt: 'nope'"
    (tmp_path / "out.txt").write_text("done\n")
    assert testing.grade(FileCheck, workspace=tmp_path).passed is True
    assert testing.grade(Shout, evidence=RunEvidence(output="LOUD", tool_calls=[{"name": "bash"}])).passed
    with pytest.raises(ValueError):
        testing.grade(Shout, "x", evidence=RunEvidence(output="y"))


def test_grade_starts_and_closes_the_grader():
    Started.log.clear()
    result = testing.grade(Started, "x", setup=GraderSetup(judge_model="judge-1"), baseline_output="old")
    assert Started.log == [("start", "judge-1"), ("close",)]
    assert result.feedback == "baseline=old"


def test_grade_refuses_what_is_not_a_grader():
    with pytest.raises(TypeError):
        testing.grade(dict, "x")
    with pytest.raises(WazaError, match="unknown grader 'txt'"):
        testing.grade("txt", "x")


# -- scripted executor and run_suite -------------------------------------------------------

def test_run_suite_with_a_scripted_agent(tmp_path):
    agent = testing.scripted_executor({"loud": "HELLO", "quiet": "hello"})
    run = testing.run_suite({"graders": [{"type": "shout", "name": "caps"}]},
                            tasks=[{"id": "loud", "inputs": {"prompt": "shout"}},
                                   {"id": "quiet", "inputs": {"prompt": "whisper"}}],
                            executor=agent, plugins=[Shout], folder=tmp_path)
    assert run.exit_code == 1  # one task failed
    assert run.validation("loud", "caps")["passed"] is True
    assert run.validation("quiet", "caps")["feedback"] == "has lowercase letters"
    assert run.summary["succeeded"] == 1 and run.summary["failed"] == 1
    assert run.results["config"]["engine_type"] == "scripted"
    assert [r.prompt for r in agent.requests] == ["shout", "whisper"]
    assert json.loads((tmp_path / "results.json").read_text())["summary"] == run.summary


def test_answers_by_prompt_lists_errors_and_files(tmp_path):
    agent = testing.scripted_executor({
        "write it": testing.Answer(output="DONE", files={"out.txt": "done\n"},
                                   tool_calls=[{"name": "create", "arguments": {"path": "out.txt"}}]),
        "flaky": ["not yet", "OK NOW"],
        "broken": ExecutorError("agent crashed"),
        "refuses": testing.Answer(error="quota exceeded"),
    })
    run = testing.run_suite(
        {"graders": [{"type": "shout", "name": "caps"}], "config": {"max_attempts": 2}},
        tasks=[{"id": "w", "inputs": {"prompt": "write it"},
                "graders": [{"type": "file_check", "name": "file"}]},
               {"id": "f", "inputs": {"prompt": "flaky"}},
               {"id": "b", "inputs": {"prompt": "broken"}},
               {"id": "r", "inputs": {"prompt": "refuses"}}],
        executor=agent, plugins=[Shout, FileCheck], folder=tmp_path)
    w = run.run("w")
    assert w["status"] == "passed" and w["validations"]["file"]["passed"] is True
    assert w["session_digest"]["tools_used"] == ["create"]
    f = run.run("f")
    assert (f["status"], f["attempts"], f["final_output"]) == ("passed", 2, "OK NOW")
    assert run.run("b")["status"] == "error" and run.run("b")["error_msg"] == "agent crashed"
    assert run.run("r")["error_msg"] == "quota exceeded"
    assert run.exit_code == 1


def test_an_unscripted_task_is_an_executor_error_unless_there_is_a_default(tmp_path):
    run = testing.run_suite({}, tasks=[{"id": "t", "inputs": {"prompt": "p"}}],
                            executor=testing.scripted_executor({}), folder=tmp_path / "a")
    assert "no scripted answer for task 't'" in run.run("t")["error_msg"]
    run = testing.run_suite({}, tasks=[{"id": "t", "inputs": {"prompt": "p"}}],
                            executor=testing.scripted_executor(default="fine"), folder=tmp_path / "b")
    assert run.exit_code == 0 and run.run("t")["final_output"] == "fine"


def test_a_suite_mapping_need_not_grade_unless_it_says_so(tmp_path):
    """write_suite's mapping default ``allow_ungraded: true``; ``false`` gets waza run's rule."""
    task = [{"id": "t", "inputs": {"prompt": "p"}}]
    assert testing.run_suite({}, tasks=task, folder=tmp_path / "a").exit_code == 0
    run = testing.run_suite({"allow_ungraded": False}, tasks=task, folder=tmp_path / "b")
    assert run.exit_code == 2 and "task 't' has no grader" in run.stderr


def test_trials_take_successive_answers(tmp_path):
    agent = testing.scripted_executor({"t": ["A", "b", "C"]})
    run = testing.run_suite({"graders": [{"type": "shout", "name": "caps"}]},
                            tasks=[{"id": "t", "inputs": {"prompt": "p"}}], executor=agent, plugins=[Shout],
                            args=["--trials", "4"], folder=tmp_path)
    assert [run.run("t", n)["final_output"] for n in (1, 2, 3, 4)] == ["A", "b", "C", "C"]
    assert run.task("t")["status"] == "failed"


def test_a_bad_suite_exits_2_with_the_message_and_no_results(tmp_path):
    run = testing.run_suite({"graders": [{"type": "shout", "name": "caps", "config": {"loud": True}}]},
                            tasks=[{"id": "t", "inputs": {"prompt": "p"}}], plugins=[Shout], folder=tmp_path)
    assert run.exit_code == 2 and run.results is None
    assert "unknown key 'loud'" in run.stderr and "Traceback" not in run.stderr
    with pytest.raises(AssertionError, match="exited 2"):
        run.task("t")


def test_run_suite_from_yaml_text_and_an_existing_folder(tmp_path):
    eval_file = testing.write_suite(tmp_path / "s",
                                    "name: y\nskill: z\ntasks: ['tasks/*.yaml']\nallow_ungraded: true\n",
                                    {"tasks/one.yaml": "id: one\ninputs: {prompt: hi}\n"},
                                    files={"fixtures/a.txt": "x"})
    assert (tmp_path / "s" / "fixtures" / "a.txt").read_text() == "x"
    run = testing.run_suite(eval_file.parent, folder=tmp_path / "out")  # the suite's own executor: mock
    assert run.exit_code == 0 and run.run("one")["final_output"].startswith("Mock response for: hi")
    with pytest.raises(ValueError):
        testing.run_suite(eval_file, tasks=[{"id": "x"}])
    with pytest.raises(ValueError, match="plugins="):
        testing.run_suite(eval_file, args=["-p", "mod"])


def test_plugins_as_modules_and_objects(tmp_path, monkeypatch):
    (tmp_path / "shout_mod.py").write_text(
        "from waza_core import Grader, hookimpl\n"
        "class S(Grader):\n    name = 'shout2'\n"
        "    def grade(self, ctx):\n        return self.result(1.0, True, 'ok')\n"
        "@hookimpl\ndef waza_register_graders(register):\n    register(S)\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    class Plugin:
        @staticmethod
        @hookimpl
        def waza_register_graders(register):
            register(Shout)

    registry = testing.make_registry(["shout_mod", Plugin])
    assert registry.get("grader", "shout2") is not None and registry.get("grader", "shout") is Shout
    with pytest.raises(TypeError):
        testing.make_registry([int])


# -- reporters ----------------------------------------------------------------------------

class CountReporter(Reporter):
    name = "count"
    option_help = {"label": "Text before the count."}

    def write(self, results, out):
        out.write(f"{self.options.get('label', 'tasks')}: {results.task_count}\n".encode())


def test_render_report(tmp_path):
    run = testing.run_suite({}, tasks=[{"id": "a", "inputs": {"prompt": "p"}}, {"id": "b", "inputs": {"prompt": "q"}}],
                            folder=tmp_path)
    assert testing.render_report(CountReporter, run) == b"tasks: 2\n"
    assert testing.render_report(CountReporter, run.results, {"label": "n"}) == b"n: 2\n"
    with pytest.raises(WazaError, match="reporter 'count' has no option 'lable'"):
        testing.render_report(CountReporter, run, {"lable": "n"})
    assert testing.render_report("count", run, plugins=[CountReporter]) == b"tasks: 2\n"
    with pytest.raises(WazaError, match="unknown reporter"):
        testing.render_report("nope", run)

