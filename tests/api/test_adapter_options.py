"""``waza optimize run --adapter-option KEY=VALUE``: options each adapter declares
(``OptimizerAdapter.option_help``), with the dedicated flags kept as aliases."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import REPO
from tests.inprocess import run_waza_in_process
from waza_core import AdapterOptions, OptimizerAdapter
from waza_core.plugins import build_plugin_manager

EX = REPO / "examples" / "optimizer"
BASE = ["optimize", "run", str(EX / "eval.yaml"), "--target", "context-overlay", "--seed", str(EX / "seed"),
        "--optimization-tag", "optimization", "--qualification-tag", "qualification"]

# A third-party adapter that declares one option and answers "done" at once.
DONE_ADAPTER = '''
import json
from waza_core import ADAPTER_RESPONSE_KIND, HARNESS_CAPABILITIES, AdapterReply, OptimizerAdapter, hookimpl

class Done(OptimizerAdapter):
    name = "done-now"
    option_help = {"label": "Written to the file named by the WAZA_TEST_LABEL_FILE variable."}

    def call(self, request, *, timeout, cancel):
        import os
        with open(os.environ["WAZA_TEST_LABEL_FILE"], "a") as fh:
            fh.write(self.options.get("label", "(none)") + "\\n")
        if request["operation"] == "describe":
            doc = {"kind": ADAPTER_RESPONSE_KIND, "schema_version": "1.0", "operation": "describe",
                   "contract_versions": ["1.0"], "adapter": {"name": "done-now", "version": "1"},
                   "required_capabilities": ["propose.files", "target.context-overlay"],
                   "optional_capabilities": [], "paid_calls": False}
        else:
            doc = {"kind": ADAPTER_RESPONSE_KIND, "schema_version": "1.0", "operation": "propose",
                   "contract_version": request["contract_version"], "status": "done",
                   "parent_id": request["parent"]["candidate_id"],
                   "usage": {"status": "measured", "premium_requests": 0}}
        return AdapterReply(raw=json.dumps(doc).encode())

@hookimpl
def waza_register_optimizer_adapters(register):
    register(Done)
'''


def optimize(tmp_path, *args, env=None):
    """``waza optimize run`` of the example suite, in this process (tests/inprocess.py)."""
    proc = run_waza_in_process(*BASE, "--output-dir", str(tmp_path / "out"), *args, cwd=tmp_path, env=env)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def report(tmp_path):
    return json.loads((tmp_path / "out" / "report.json").read_text())


def test_adapter_option_is_the_same_as_the_dedicated_flag(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    by_flag = optimize(tmp_path / "a", "--adapter", "fake", "--fake-script", str(EX / "fake-script.json"))
    by_option = optimize(tmp_path / "b", "--adapter", "fake", "--adapter-option", f"script={EX / 'fake-script.json'}")
    assert by_flag.returncode == by_option.returncode == 0, by_option.stderr
    assert report(tmp_path / "a")["outcome"] == report(tmp_path / "b")["outcome"] == "accepted"


def test_an_unknown_key_is_refused_before_any_call(tmp_path):
    proc = optimize(tmp_path, "--adapter", "fake", "--adapter-option", "scrpit=x.json")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    failure = report(tmp_path)["failure"]
    assert failure["category"] == "invalid_config"
    assert failure["message"] == "--adapter-option scrpit is not an option of --adapter fake (its options: script)"
    assert report(tmp_path)["evaluations"] == []


def test_a_dedicated_flag_for_another_adapter_is_named_as_typed(tmp_path):
    proc = optimize(tmp_path, "--adapter", "fake", "--adapter-command", "python3")
    assert proc.returncode == 1
    assert report(tmp_path)["failure"]["message"].startswith(
        "--adapter-command is not an option of --adapter fake")


def test_a_single_valued_key_given_twice_is_refused(tmp_path):
    proc = optimize(tmp_path, "--adapter", "fake", "--adapter-option", "script=a.json", "--adapter-option",
                    "script=b.json")
    assert proc.returncode == 1
    assert "--adapter-option script given 2 times; --adapter fake takes one" in report(tmp_path)["failure"]["message"]


@pytest.mark.parametrize("bad", ["script", "=x", "-x=1"])
def test_an_option_without_key_equals_value_is_a_usage_error(tmp_path, bad):
    proc = optimize(tmp_path, "--adapter", "fake", "--adapter-option", bad)
    assert proc.returncode == 2 and "expected KEY=VALUE" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_plugin_adapter_reads_its_declared_option(tmp_path):
    (tmp_path / "done_adapter.py").write_text(DONE_ADAPTER)
    labels = tmp_path / "labels.txt"
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]), "WAZA_TEST_LABEL_FILE": str(labels)}
    proc = optimize(tmp_path, "--adapter", "done-now", "-p", "done_adapter", "--adapter-option", "label=hi there",
                    env=env)
    assert proc.returncode == 0, proc.stderr
    assert report(tmp_path)["outcome"] == "no_improvement"
    assert labels.read_text().splitlines() == ["hi there", "hi there"]  # describe, then propose


def test_repeatable_options_keep_their_order():
    from waza_core.cli.optimize import _adapter_options

    opts = _adapter_options({"--adapter-arg": ["a", "b"], "--fake-script": []}, ["arg=c", "env=HOME"])
    assert opts.get_all("arg") == ("a", "b", "c") and opts.get("env") == "HOME"
    assert opts.origin("arg") == "--adapter-arg" and opts.origin("env") == "--adapter-option env"
    assert opts.get("nothing", "dflt") == "dflt" and opts.get_all("nothing") == ()


def test_every_builtin_adapter_declares_its_options_with_help():
    registry = build_plugin_manager()[1]
    for name in registry.names("optimizer_adapter"):
        cls = registry.get("optimizer_adapter", name)
        assert issubclass(cls, OptimizerAdapter)
        assert all(isinstance(h, str) and h.strip() for h in cls.option_help.values()), name
        assert set(cls.repeatable_options) <= set(cls.option_help), name
    assert set(registry.get("optimizer_adapter", "command").option_help) == {"command", "arg", "env"}
    assert set(registry.get("optimizer_adapter", "fake").option_help) == {"script"}
    assert set(registry.get("optimizer_adapter", "copilot-reflect").option_help) == {"model"}


def test_option_problems_checks_keys_and_repeats():
    class A(OptimizerAdapter):
        name = "a"
        option_help = {"one": "x", "many": "y"}
        repeatable_options = frozenset({"many"})

    assert A.option_problems(AdapterOptions.of({"one": "1", "many": ["1", "2"]})) == []
    assert A.option_problems(AdapterOptions.of({"two": "2"})) == [
        "--adapter-option two is not an option of --adapter a (its options: many, one)"]
    assert A.option_problems(AdapterOptions.of({"one": ["1", "2"]})) == [
        "--adapter-option one given 2 times; --adapter a takes one"]


def test_waza_plugins_options_lists_declared_options():
    from tests.conftest import run_waza

    proc = run_waza("plugins", "--options")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert "optimizer adapter command (waza optimize run --adapter NAME --adapter-option KEY=VALUE)" in text
    assert "  script  Strict JSON file of proposals" in text
    assert "config.cli.command" in text
    doc = json.loads(run_waza("plugins", "--options", "--json").stdout)
    by = {(e["kind"], e["name"]): e["options"] for e in doc["options"]}
    assert set(by[("optimizer_adapter", "command")]) == {"command", "arg", "env"}
