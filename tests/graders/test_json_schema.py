"""The json_schema grader: the whole output is JSON, validated against a schema."""

from __future__ import annotations

import json

import pytest

from waza_core.errors import GraderError

from .conftest import ctx, suite_at

SCHEMA = {"type": "object", "required": ["id", "state"],
          "properties": {"id": {"const": "item-7"}, "state": {"const": "ready"}}}


def test_matching_output_passes_with_no_details(build):
    res = build("json_schema", {"schema": SCHEMA}).grade(ctx(' {"id": "item-7", "state": "ready"}\n'))
    assert (res.score, res.passed, res.feedback, res.details) == (1.0, True, "Output matches JSON schema", {})


def test_schema_violation_is_binary_zero_with_every_error(build):
    res = build("json_schema", {"schema": SCHEMA}).grade(ctx('{"state": "busy"}'))
    assert (res.score, res.passed) == (0.0, False)
    assert res.feedback == ("Schema validation failed: jsonschema validation failed with 'schema.json#'\n"
                            "- at '': 'id' is a required property\n"
                            "- at '/state': 'ready' was expected")
    assert res.details == {"failures": [res.feedback]}


@pytest.mark.parametrize("output,error", [
    ("", "unexpected end of JSON input"),
    ("Here is the JSON: {}", "invalid character 'H' looking for beginning of value"),
    ('{"id": "item-7"} thanks', "invalid character 't' after top-level value"),
    ('```json\n{"id": 1}\n```', "invalid character '`' looking for beginning of value"),
    ("NaN", "invalid character 'N' looking for beginning of value"),
    ('{"a" 1}', "invalid character '1' after object key"),
    ("[1 2]", "invalid character '2' after array element"),
])
def test_output_must_be_json_as_a_whole(build, output, error):
    res = build("json_schema", {"schema": {}}).grade(ctx(output))
    assert (res.score, res.passed) == (0.0, False)
    assert res.feedback == f"Output is not valid JSON: {error}"
    assert res.details == {"error": error}


def test_extract_json_accepts_one_embedded_document(build):
    g = build("json_schema", {"schema": SCHEMA, "extract_json": True})
    assert g.grade(ctx('Sure:\n```json\n{"id": "item-7", "state": "ready"}\n```\nDone.')).passed
    assert g.grade(ctx('Result {"id": "item-7", "state": "ready"} as asked')).passed
    res = g.grade(ctx('two: {"id": 1} {"id": 2}'))
    assert res.feedback == "Output is not valid JSON: output contains multiple JSON documents"
    assert g.grade(ctx("none")).feedback == "Output is not valid JSON: output does not contain a JSON document"


def test_draft_2020_12_by_default_and_schema_keyword_selects_another(build):
    # prefixItems exists in 2020-12 only; draft-07 ignores it
    schema = {"prefixItems": [{"type": "string"}]}
    assert not build("json_schema", {"schema": schema}).grade(ctx("[1]")).passed
    old = dict(schema, **{"$schema": "http://json-schema.org/draft-07/schema#"})
    assert build("json_schema", {"schema": old}).grade(ctx("[1]")).passed


def test_formats_are_annotations_and_refs_resolve_locally(build):
    schema = {"$defs": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/$defs/n"},
                                                                     "e": {"format": "email"}}}
    g = build("json_schema", {"schema": schema})
    assert g.grade(ctx('{"n": 3, "e": "not an email"}')).passed
    assert not g.grade(ctx('{"n": "3"}')).passed


def test_remote_ref_is_never_fetched(build):
    g = build("json_schema", {"schema": {"$ref": "https://example.invalid/schema.json"}})
    with pytest.raises(GraderError) as exc:
        g.grade(ctx("{}"))
    assert exc.value.kind == "schema" and "cannot be applied" in str(exc.value)


def test_schema_file_from_cwd_then_suite_folder(build, tmp_path, monkeypatch):
    suite = suite_at(tmp_path / "suite")
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "s.json").write_text(json.dumps({"type": "array"}))
    monkeypatch.chdir(tmp_path)
    g = build("json_schema", {"schema_file": "s.json"}, suite=suite)
    assert g.grade(ctx("[]")).passed and not g.grade(ctx("{}")).passed
    (tmp_path / "s.json").write_text(json.dumps({"type": "object"}))  # waza's rule comes first
    g = build("json_schema", {"schema_file": "s.json"}, suite=suite)
    assert g.grade(ctx("{}")).passed


def test_schema_file_problems_are_that_runs_grader_error(registry, tmp_path, monkeypatch):
    """waza (Go) reads schema_file when grading, after the output parsed as JSON: a missing or
    bad file is the run's grader error (kind schema_file), never a refusal of the whole suite."""
    from waza_core.model import GraderSpec

    monkeypatch.chdir(tmp_path)
    cls = registry.get("grader", "json_schema")
    suite = suite_at(tmp_path / "suite")
    g = cls(GraderSpec("json_schema", "js", config={"schema_file": "nope.json"}, where="eval.yaml (graders[0])"), suite)
    assert not g.grade(ctx("not json")).passed  # the output is judged first, as in waza (Go)
    with pytest.raises(GraderError) as exc:
        g.grade(ctx("{}"))
    assert str(exc.value).startswith("eval.yaml (graders[0]): grader 'js': schema_file 'nope.json' not found")
    assert str(tmp_path / "suite" / "nope.json") in str(exc.value) and exc.value.kind == "schema_file"
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(GraderError, match="is not JSON"):
        cls(GraderSpec("json_schema", "js", config={"schema_file": "bad.json"}), suite).grade(ctx("{}"))
    (tmp_path / "bad.json").write_text('{"type": 5}')
    with pytest.raises(GraderError, match="invalid JSON Schema at '/type'"):
        cls(GraderSpec("json_schema", "js", config={"schema_file": "bad.json"}), suite).grade(ctx("{}"))


def test_config_errors(problems):
    assert problems("json_schema", {}) == ["needs 'schema' (inline) or 'schema_file'"]
    assert problems("json_schema", {"schema": {"type": "nope"}}) == [
        "invalid JSON Schema at '/type': 'nope' is not valid under any of the given schemas"]
    assert problems("json_schema", {"schema": []})[0].startswith("schema: expected mapping")
    assert problems("json_schema", {"schemafile": "x"})[0] == "unknown key 'schemafile' (did you mean 'schema_file'?)"


def test_needs_no_workspace(registry):
    assert registry.get("grader", "json_schema").needs_workspace is False


@pytest.mark.parametrize("output", ["[" * 100_000 + "]" * 100_000, "[" * 100_000, '{"a":' * 50_000])
def test_an_output_nested_past_the_parser_fails_instead_of_erroring(build, output):
    # waza (Go) answers "exceeded max depth" past 10000 levels; Python's parser stops at
    # its recursion limit. Either way a run's output cannot turn the run into an error.
    res = build("json_schema", {"schema": {"type": "array"}}).grade(ctx(output))
    assert (res.score, res.passed, res.feedback) == (0.0, False, "Output is not valid JSON: exceeded max depth")


def test_extract_json_skips_a_document_nested_past_the_parser(build):
    res = build("json_schema", {"schema": {"type": "array"}, "extract_json": True}).grade(ctx("x " + "[" * 5000))
    assert res.feedback == "Output is not valid JSON: output does not contain a JSON document"


def test_an_output_too_deep_for_the_validator_fails_the_check(build):
    nested = "[" * 900 + "]" * 900  # parses, but a recursive schema walks deeper than Python's stack
    res = build("json_schema", {"schema": {"type": "array", "items": {"$ref": "#"}}}).grade(ctx(nested))
    assert (res.score, res.passed) == (0.0, False)
    assert res.feedback == "Schema validation failed: the output nests too deeply to validate"
