"""Load-time rules of command_mocks, mcp_mocks and inputs.repos/workdir/environment (waza's),
reported as file:line:col lines by `waza validate`, exit 2, no traceback."""

from __future__ import annotations

import pytest

from tests.inprocess import waza_in_process  # noqa: F401  (the `waza` fixture, in process)
from waza_core.mocks.sanitize import sanitize_args, sensitive_name
from waza_core.mocks.spec import check_command_mocks, check_repos, check_workdir, parse_command_mocks


def messages(found):
    return [m for _, m in found]


@pytest.mark.parametrize("name", ["bin/az", " az", "az ", "", ".hidden", "a b", "../az", "a\\b"])
def test_command_names_must_be_bare_executable_names(name):
    assert any("must be an executable name" in m
               for m in messages(check_command_mocks([{"name": name, "responses": [{"args": []}]}])))


def test_names_are_unique_case_insensitively():
    found = check_command_mocks([{"name": "az", "responses": [{"args": []}]},
                                 {"name": "AZ", "responses": [{"args": []}]}])
    assert found == [((1, "name"), "command_mocks[1].name 'AZ' is duplicated (names are compared "
                                   "case-insensitively; also command_mocks[0])")]


@pytest.mark.parametrize("response, expected", [
    ({}, "must specify exactly one of args or args_regex"),
    ({"args": [], "args_regex": []}, "must specify exactly one of args or args_regex"),
    ({"args_regex": ["(?<=a)b"]}, "args_regex[0] '(?<=a)b' is invalid"),
    ({"args": [], "exit_code": 256}, "exit_code must be between 0 and 255, got 256"),
    ({"args": [], "exit_code": -1}, "exit_code must be between 0 and 255, got -1"),
    ({"args": [], "fixture": "f.json", "stdout": "x"}, "cannot specify both fixture and stdout"),
    ({"args": [], "fixture": "../secret"}, "fixture must be a relative path without '..' segments"),
    ({"args": [], "fixture": "a/../b"}, "fixture must be a relative path without '..' segments"),
    ({"args": [], "fixture": "/etc/passwd"}, "fixture must be a relative path"),
    ({"args": [], "fixture": "C:\\x"}, "fixture must be a relative path"),
    ({"args": [], "workdir": "..\\up"}, "workdir must be a relative path without '..' segments"),
    ({"args": [], "environment": {"A=B": "x"}}, "environment contains an invalid variable name"),
    ({"args": [], "environment": {" ": "x"}}, "environment contains an invalid variable name"),
])
def test_response_rules(response, expected):
    assert any(expected in m for m in messages(check_command_mocks([{"name": "az", "responses": [response]}])))


def test_a_valid_mock_has_no_problem_and_args_empty_counts_as_set():
    mocks = [{"name": "az", "expect_calls": 0, "responses": [{"args": []}, {"args_regex": ["a|b"]},
                                                             {"args": ["x"], "stdout": None, "fixture": "f"}]}]
    assert check_command_mocks(mocks) == []
    parsed = parse_command_mocks(mocks)[0]
    assert parsed.responses[0].args == () and parsed.responses[1].args_regex == ("a|b",)


def test_stdout_values_become_go_json_bytes():
    parsed = parse_command_mocks([{"name": "az", "responses": [{"args": [], "stdout": {"b": 1.0, "a": "<"}},
                                                               {"args": [], "stdout": "plain"}]}])[0]
    assert parsed.responses[0].stdout == b'{"a":"\\u003c","b":1}'
    assert parsed.responses[1].stdout == b"plain"


@pytest.mark.parametrize("entry, expected", [
    ({"type": "clone", "source": ".", "dest": "r"}, "unsupported type 'clone'"),
    ({"type": "worktree", "dest": "r"}, "source is required"),
    ({"type": "worktree", "source": "."}, "dest is required"),
    ({"type": "worktree", "source": ".", "dest": "/abs"}, "must be a relative path"),
    ({"type": "worktree", "source": ".", "dest": "foo/../bar"}, "must not contain '..' segments"),
    ({"type": "worktree", "source": ".", "dest": "./"}, "must name a folder below the workspace"),
])
def test_repo_rules(entry, expected):
    assert any(expected in m for m in messages(check_repos([entry])))


def test_overlapping_repo_destinations():
    found = check_repos([{"type": "worktree", "source": ".", "dest": "a"},
                         {"type": "worktree", "source": ".", "dest": "a/b"}])
    assert messages(found) == ["inputs.repos[1]: dest 'a/b' overlaps inputs.repos[0].dest"]


@pytest.mark.parametrize("workdir", ["../escape", "foo/../bar", "/abs", ""])
def test_workdir_rules(workdir):
    assert check_workdir(workdir)
    if ".." in workdir:
        assert ".." in check_workdir(workdir)[0][1]


def test_sanitizer_matches_waza():
    env = {"AZURE_CLIENT_SECRET": "shh-value", "HOME": "/home/x", "EMPTY_TOKEN": ""}
    args = ["--client-secret", "x", "--Access_Token=y", "-p", "--key", "k", "use shh-value here",
            "sk-" + "a" * 24, "AKIA" + "B" * 16, "Bearer " + "t" * 20, "eyJa.eyJb.c", "-", "--", "plain"]
    assert sanitize_args(args, env) == [
        "[REDACTED]", "[REDACTED]", "--Access_Token=[REDACTED]", "-p", "[REDACTED]", "[REDACTED]",
        "use [REDACTED] here", "[REDACTED]", "[REDACTED]", "[REDACTED]", "[REDACTED]", "-", "--", "plain"]
    assert sensitive_name("GITHUB_TOKEN") and sensitive_name("sig") and not sensitive_name("keyboard")


def test_hostile_suite_is_reported_with_positions(make_suite, waza, tmp_path):
    (tmp_path / "secret.json").write_text("{}")
    path = make_suite("""
        schemaVersion: "1.3"
        name: hostile
        skill: demo
        command_mocks:
          - name: bin/az
            responses: [{args: []}]
          - name: gh
            responses: [{args: [], fixture: leak.json}]
        mcp_mocks:
          - name: inv
            fixtures: ../outside
        tasks: ["tasks/*.yaml"]
        """, tasks={"tasks/t.yaml": """
        id: t
        inputs:
          prompt: hi
          workdir: foo/../bar
          repos: [{type: worktree, source: ., dest: x/../y}]
        """})
    (path.parent / "leak.json").symlink_to(tmp_path / "secret.json")
    done = waza("validate", str(path))
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "Traceback" not in err
    assert "eval.yaml:5:11: command_mocks[0].name must be an executable name" in err
    assert "eval.yaml:8:37: command_mocks[1] responses[0] fixture 'leak.json': the path leaves" in err
    assert "eval.yaml:11:15: mcp_mocks[0].fixtures: '../outside': the path must not contain '..'" in err
    assert "t.yaml:4:12: inputs.workdir 'foo/../bar' must not contain '..' segments" in err
    assert "t.yaml:5:45: inputs.repos[0]: dest 'x/../y' must not contain '..' segments" in err


def test_version_gate(make_suite, waza):
    path = make_suite("""
        schemaVersion: "1.2"
        name: old
        skill: demo
        tasks: ["tasks/*.yaml"]
        """, tasks={"tasks/t.yaml": """
        id: t
        inputs: {prompt: hi}
        command_mocks: []
        """})
    done = waza("validate", str(path))
    assert done.returncode == 2
    assert "t.yaml:3:1: command_mocks requires schemaVersion 1.3 or newer in eval.yaml (it says '1.2')" \
        in done.stderr.decode()


def test_a_fifo_fixture_is_refused_at_load(make_suite, waza):
    import os

    path = make_suite("""
        schemaVersion: "1.3"
        name: fifo
        skill: demo
        command_mocks:
          - name: az
            responses: [{args: [], fixture: pipe}]
        tasks: ["tasks/*.yaml"]
        """, tasks={"tasks/t.yaml": "id: t\ninputs: {prompt: hi}\n"})
    os.mkfifo(path.parent / "pipe")
    done = waza("validate", str(path), timeout=30)
    assert done.returncode == 2
    assert "is not a regular file" in done.stderr.decode()
