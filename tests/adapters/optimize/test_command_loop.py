"""``--adapter command`` inside the optimizer loop: every reply the seed calls malformed,
version and consent failures, timeouts and crashes as the report records them, usage,
and the walkthrough through the real ``waza`` command."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from tests.proc_helpers import alive
from waza_core.suite import schema

from .conftest import CHECKLIST_ADAPTER, EXAMPLE, PY, adapter_script, wait_for

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process-group tests are POSIX only")


def scripted(example, propose_body: str, describe: str = "describe_ok()"):
    """An adapter answering describe with ``describe`` and propose with ``propose_body``."""
    return adapter_script(example.root, f'''
def reply(req):
    if req["operation"] == "describe":
        return {describe}
{propose_body}
''')


def run(example, script, **kw):
    out = example.run(args=[script, example.obs], **kw)
    assert not list(schema.plain_validator("optimizer-report-1.0").iter_errors(out.report))
    return out


# -- the seed's list of malformed replies ----------------------------------------------------------

MALFORMED = {
    "invalid JSON": ('    return "{not json"',
                     'invalid JSON'),
    "empty output": ('    return ""',
                     'invalid JSON'),
    "trailing data": ('    return json.dumps(propose_ok(req)) + " {}"',
                      'trailing data'),
    "two documents": ('    return json.dumps(propose_ok(req)) + json.dumps(propose_ok(req))',
                      'trailing data'),
    "duplicate key": ('    return json.dumps(propose_ok(req))[:-1] + \', "status": "done"}\'',
                      "duplicate key 'status'"),
    "NaN": ('    return json.dumps(propose_ok(req, usage={"status": "measured", "premium_requests": float("nan")}))',
            'NaN is not JSON'),
    "not UTF-8": ('    return json.dumps(propose_ok(req)).encode().replace(b"everything", b"every\\xffthing")',
                  'not UTF-8'),
    "unknown field": ('    return propose_ok(req, note="hello")',
                      "'note' was unexpected"),
    "unknown usage field": ('    return propose_ok(req, usage={"status": "measured", "premium_requests": 0, '
                            '"dollars": 1})',
                            "'dollars' was unexpected"),
    "missing usage": ('    return propose_ok(req, usage=...)',
                      "'usage' is a required property"),
    "missing parent_id": ('    return propose_ok(req, parent_id=...)',
                          "'parent_id' is a required property"),
    "null usage": ('    return propose_ok(req, usage=None)',
                   'usage: None is not of type'),
    "null files": ('    return propose_ok(req, files=None)',
                   'files: None is not of type'),
    "null content": ('    return propose_ok(req, files=[{"path": "checklist.md", "content": None}])',
                     'content: None is not of type'),
    "negative premium requests": ('    return propose_ok(req, usage={"status": "measured", "premium_requests": -1})',
                                  'premium_requests: -1 is less than'),
    "negative tokens": ('    return propose_ok(req, usage={"status": "measured", "input_tokens": -5})',
                        'input_tokens: -5 is less than'),
    "wrong parent": ('    return propose_ok(req, parent_id="0" * 64)',
                     'names parent 0000000000000000'),
    "files with done": ('    return propose_ok(req, status="done")',
                        'should not be valid'),
    "candidate without files": ('    return propose_ok(req, files=...)',
                                "'files' is a required property"),
    "binary content": ('    return propose_ok(req, files=[{"path": "checklist.md", "content": "a\\u0000b"}])',
                       'NUL character'),
    "wrong operation": ('    return dict(describe_ok(), operation="describe")',
                        "operation is 'describe'"),
    "not an object": ('    return "[1, 2]"',
                      'expected a JSON object'),
}


@pytest.mark.parametrize("body,why", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_propose_replies(example, body, why):
    out = run(example, scripted(example, body))
    assert (out.code, out.outcome, out.category) == (1, "failed", "malformed_proposal"), out.message
    assert why in out.message
    proposal = out.report["proposals"][0]
    assert proposal["result"] == "failed" and proposal["failure"]["category"] == "malformed_proposal"
    assert len(out.report["evaluations"]) == 1  # only the seed: nothing malformed is evaluated


def test_missing_skill_md_under_the_skill_target(example):
    seed = example.root / "skill-seed"
    seed.mkdir()
    (seed / "SKILL.md").write_text("---\nname: example\ndescription: release checklist\n---\nRun the unit tests\n")
    out = run(example, scripted(example, '    return propose_ok(req, files=[{"path": "notes.md", "content": "x"}])'),
              target="skill-directory", seed=seed)
    assert out.category == "malformed_proposal" and "SKILL.md" in out.message


def test_malformed_describe_reply(example):
    out = run(example, scripted(example, "    return {}", describe='dict(describe_ok(), paid_calls=None)'))
    assert out.category == "malformed_proposal" and "paid_calls" in out.message
    assert out.report["evaluations"] == []


@pytest.mark.parametrize("describe,propose", [
    ('describe_ok(contract_versions=["2.0"])', "    return {}"),
    ("describe_ok()", '    return propose_ok(req, contract_version="2.0", new_field=1)'),
], ids=["describe", "propose"])
def test_unsupported_contract_version(example, describe, propose):
    out = run(example, scripted(example, propose, describe=describe))
    assert (out.code, out.category) == (1, "unsupported_version"), out.message
    assert "2.0" in out.message


def test_unsafe_path_keeps_its_own_category(example):
    body = '    return propose_ok(req, files=[{"path": "../escape.md", "content": "x"}])'
    out = run(example, scripted(example, body))
    assert out.category == "unsafe_candidate_path"


# -- consent ---------------------------------------------------------------------------------------


def test_consent_is_required_and_the_adapter_never_starts(example):
    script = adapter_script(example.root, '''
def reply(req):
    note("started.json", True)
    return describe_ok()
''')
    out = run(example, script, allow_paid_calls=False)
    assert (out.code, out.category) == (1, "consent_required")
    assert "the command adapter may make paid calls" in out.message and "--allow-paid-calls" in out.message
    assert out.report["consent"] == {"required": True, "allow_paid_calls": False, "reasons": ["adapter"]}
    assert not (example.obs / "started.json").exists()
    assert out.report["evaluations"] == [] and out.report["proposals"] == []


def test_consent_is_required_even_when_the_adapter_says_it_is_free(example):
    """paid_calls: false in describe does not lift it: waza cannot know what the program calls."""
    script = scripted(example, "    return propose_ok(req, status='done', files=...)")
    assert run(example, script, allow_paid_calls=False).category == "consent_required"
    assert run(example, script).outcome == "no_improvement"


# -- failures recorded in the report ---------------------------------------------------------------


def test_adapter_timeout_kills_the_tree_and_keeps_the_stderr_tail(example):
    script = scripted(example, '''
    import subprocess, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    note("child.json", child.pid)
    print("thinking hard", file=sys.stderr, flush=True)
    time.sleep(300)
''')
    t0 = time.monotonic()
    out = run(example, script, adapter_timeout="1500ms")
    assert time.monotonic() - t0 < 30
    assert (out.code, out.outcome, out.category) == (1, "failed", "optimizer_failure")
    assert "timed out after 1.5s" in out.message
    proposal = out.report["proposals"][0]
    assert proposal["stderr_tail"] == "thinking hard\n" and proposal["spend"] == {"status": "unavailable"}
    pid = json.loads((example.obs / "child.json").read_text())
    assert wait_for(lambda: not alive(pid))


def test_the_run_deadline_reports_timeout(example):
    script = scripted(example, "    import time; time.sleep(300)")
    out = run(example, script, timeout="3s")
    assert (out.outcome, out.category) == ("incomplete", "timeout")


def test_nonzero_exit_keeps_the_stderr_tail(example):
    script = scripted(example, '''
    print("Traceback (most recent call last):", file=sys.stderr)
    print("KeyError: 'OPENAI_API_KEY'", file=sys.stderr)
    sys.exit(1)
''')
    out = run(example, script)
    assert out.category == "optimizer_failure"
    assert "exited with status 1; stderr ends with: KeyError: 'OPENAI_API_KEY'" in out.message
    assert out.report["proposals"][0]["stderr_tail"].endswith("KeyError: 'OPENAI_API_KEY'\n")


def test_describe_crash_is_named_in_the_failure_message(example):
    script = example.root / "broken.py"
    script.write_text("import sys\nsys.stdin.read()\nraise SystemExit('adapter config missing')\n")
    out = run(example, script)
    assert out.category == "optimizer_failure" and "describe" in out.message
    assert "stderr ends with: adapter config missing" in out.message


# -- usage -----------------------------------------------------------------------------------------


def test_adapter_usage_is_reported_with_the_evaluation_fields(example):
    usage = {"status": "measured", "provider": "acme-llm", "provider_requests": 2, "input_tokens": 1200,
             "output_tokens": 300}
    script = scripted(example, f'''
    if req["iteration"] == 1:
        return propose_ok(req, usage={usage!r})
    return propose_ok(req, status="done", files=..., usage={{"status": "partial", "provider": "acme-llm",
                                                            "provider_requests": 1}})
''')
    out = run(example, script)
    assert out.outcome in ("accepted", "rejected", "no_improvement")
    spends = [p["spend"] for p in out.report["proposals"]]
    assert spends == [usage, {"status": "partial", "provider": "acme-llm", "provider_requests": 1}]
    assert out.report["spend_totals"]["proposals"] == {"status": "partial", "provider": "acme-llm",
                                                       "provider_requests": 3, "input_tokens": 1200,
                                                       "output_tokens": 300}


def test_usage_is_unavailable_without_the_capability(example):
    script = scripted(example, "    return propose_ok(req, status='done', files=...)",
                      describe='describe_ok(optional_capabilities=["target.context-overlay"])')
    out = run(example, script)
    assert out.report["proposals"][0]["spend"] == {"status": "unavailable"}


# -- the walkthrough, as the seed types it ---------------------------------------------------------


def test_walkthrough_command_reaches_accepted(tmp_path):
    import shutil

    shutil.copytree(EXAMPLE, tmp_path / "examples" / "optimizer")
    proc = subprocess.run(
        [PY, "-m", "waza_core", "optimize", "run", "examples/optimizer/eval.yaml",
         "--target", "context-overlay", "--seed", "examples/optimizer/seed",
         "--optimization-tag", "optimization", "--qualification-tag", "qualification",
         "--adapter", "command", "--adapter-command", "python3",
         "--adapter-arg", "examples/optimizer/adapters/checklist_adapter.py",
         "--allow-paid-calls", "--output-dir", "optimize-command"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "outcome: accepted" in proc.stderr
    report = json.loads((tmp_path / "optimize-command" / "report.json").read_text())
    assert not list(schema.plain_validator("optimizer-report-1.0").iter_errors(report))
    assert (report["outcome"], report["stop_reason"]) == ("accepted", "adapter_done")
    assert [p["result"] for p in report["proposals"]] == ["candidate", "done"]
    assert report["adapter"]["kind"] == "command" and report["adapter"]["name"] == "checklist-adapter"
    opt = [e for e in report["evaluations"] if e["split"] == "optimization"]
    assert [e["score"] for e in opt] == [0.5, 1.0]
    q = report["qualification"]
    # the adapter never saw the held-out tasks, so it could not add "tag the release"
    assert (q["seed_score"], q["candidate_score"], q["decision"]) == (0.5, 0.5, "accepted")
    assert report["proposals"][0]["spend"] == {"status": "measured", "premium_requests": 0}
    assert "update the documentation" in report["proposals"][0]["stderr_tail"]


def test_walkthrough_without_consent_exits_1_with_one_clear_line(tmp_path):
    proc = subprocess.run(
        [PY, "-m", "waza_core", "optimize", "run", str(EXAMPLE / "eval.yaml"), "--target", "context-overlay",
         "--seed", str(EXAMPLE / "seed"), "--optimization-tag", "optimization",
         "--qualification-tag", "qualification", "--adapter", "command", "--adapter-command", "python3",
         "--adapter-arg", str(CHECKLIST_ADAPTER), "--output-dir", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "consent_required" in proc.stderr and "--allow-paid-calls" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_command_is_invalid_config_without_traceback(tmp_path):
    proc = subprocess.run(
        [PY, "-m", "waza_core", "optimize", "run", str(EXAMPLE / "eval.yaml"), "--target", "context-overlay",
         "--seed", str(EXAMPLE / "seed"), "--optimization-tag", "optimization",
         "--qualification-tag", "qualification", "--adapter", "command",
         "--adapter-command", "waza-no-such-adapter", "--allow-paid-calls", "--output-dir", str(tmp_path / "out")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "invalid_config" in proc.stderr and "waza-no-such-adapter: command not found on PATH" in proc.stderr
    assert "Traceback" not in proc.stderr
