"""``type: json_schema``: the agent's whole output must be JSON that a schema accepts.

The schema is inline (``schema``) or in a JSON file (``schema_file``), and uses the draft
its ``$schema`` names, Draft 2020-12 by default. It is checked once, when the suite
loads (inline) or when the run starts (file); ``$ref`` resolves inside the schema and
to the published meta-schemas only, never over the network.

Binary, as in waza (Go): 1.0 "Output matches JSON schema", or 0.0 with "Output is not
valid JSON: ..." or "Schema validation failed: ...". ``extract_json: true`` (newer
waza) accepts one JSON object or array inside prose or a fenced block instead.
"""

from __future__ import annotations

import json
from typing import Any

from waza_core import Grader, GraderError, GraderResult, GradingContext, WazaError, hookimpl

from ._files import locate, read_regular

SCHEMA_NAME = "schema.json"


class JsonSchemaGrader(Grader):
    name = "json_schema"
    needs_workspace = False
    config_schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "schema": {"type": "object", "description": "The JSON Schema, inline."},
            "schema_file": {"type": "string", "minLength": 1,
                            "description": "A JSON file holding the schema (working directory, then suite folder)."},
            "extract_json": {"type": "boolean",
                             "description": "Accept exactly one JSON object or array embedded in the output."},
        },
    }

    def __init__(self, spec, suite=None):
        super().__init__(spec, suite)
        c = spec.config
        self.extract = bool(c.get("extract_json"))
        #: why schema_file cannot be used: that run's grader error, raised once the output parsed
        #: as JSON (waza (Go) reads the file when grading), not a refusal of the whole suite
        self.file_problem: str | None = None
        self.validator = None
        if "schema" in c:
            schema = c["schema"]
        else:
            try:
                schema = self._load_file(c["schema_file"])
            except WazaError as exc:
                self.file_problem = str(exc)
                return
        problem = schema_problem(schema)
        if problem:
            if "schema" not in c:
                self.file_problem = f"{spec.where}: grader {spec.name!r}: {problem}"
                return
            raise WazaError(f"{spec.where}: grader {spec.name!r}: {problem}")
        self.validator = _validator(schema)

    def _load_file(self, value: str) -> Any:
        path, tried = locate(value, self.suite)
        data, problem = read_regular(path)
        where = f"{self.spec.where}: grader {self.spec.name!r}"
        if problem == "missing":
            raise WazaError(f"{where}: schema_file {value!r} not found (looked for "
                            f"{' and '.join(str(p) for p in tried)})")
        if problem:
            raise WazaError(f"{where}: cannot read schema_file {path}: {problem}")
        try:
            schema = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise WazaError(f"{where}: schema_file {path} is not JSON: {exc}") from None
        if not isinstance(schema, dict):
            raise WazaError(f"{where}: schema_file {path} must hold a JSON object")
        return schema

    @classmethod
    def check_config(cls, config):
        if "schema" not in config and "schema_file" not in config:
            return [((), "needs 'schema' (inline) or 'schema_file'")]
        if "schema" in config:
            problem = schema_problem(config["schema"])
            if problem:
                return [(("schema",), problem)]
        return []

    def grade(self, ctx: GradingContext) -> GraderResult:
        try:
            value = parse_output(ctx.evidence.output or "", self.extract)
        except ValueError as exc:
            return self.result(0.0, False, f"Output is not valid JSON: {exc}", error=str(exc))
        if self.validator is None:
            raise GraderError(self.file_problem or "no schema", "schema_file")
        try:
            errors = sorted(self.validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
        except RecursionError:  # the output, not the schema: nested past what the validator can walk
            failure = "Schema validation failed: the output nests too deeply to validate"
            return self.result(0.0, False, failure, failures=[failure])
        except Exception as exc:  # an unresolvable $ref: the schema, not the output, is at fault
            raise GraderError(f"the schema cannot be applied: "
                              f"{type(exc).__name__}: {exc}", "schema") from None
        if errors:
            lines = [f"jsonschema validation failed with '{SCHEMA_NAME}#'"]
            lines += [f"- at '{_pointer(e.absolute_path)}': {e.message}" for e in errors]
            failure = "Schema validation failed: " + "\n".join(lines)
            return self.result(0.0, False, failure, failures=[failure])
        return self.result(1.0, True, "Output matches JSON schema")


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a usable JSON Schema, or None."""
    # deferred: jsonschema adds ~60.4 ms to importing this module
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError

    try:
        cls = validators.validator_for(schema, default=Draft202012Validator)
    except Exception as exc:  # an unknown $schema
        return f"unsupported $schema: {exc}"
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        path = _pointer(exc.absolute_path)
        return f"invalid JSON Schema{' at ' + repr(path) if path else ''}: {exc.message}"
    return None


def _validator(schema: dict):
    # deferred: jsonschema adds ~60.4 ms to importing this module
    from jsonschema import Draft202012Validator, validators
    from jsonschema_specifications import REGISTRY  # the published meta-schemas; no network

    cls = validators.validator_for(schema, default=Draft202012Validator)
    return cls(schema, registry=REGISTRY)


def _pointer(path) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


# -- the output ------------------------------------------------------------------------

def _no_constants(name: str):
    raise _Constant(name)


class _Constant(ValueError):
    """NaN/Infinity: Python's json accepts them, Go's does not."""


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_no_constants)


def parse_output(output: str, extract: bool) -> Any:
    """The output as one JSON value; ValueError worded as Go's encoding/json words it."""
    try:
        return _loads(output)
    except _Constant:
        err: ValueError = ValueError(_go_json_error(output, None))
    except json.JSONDecodeError as exc:
        err = ValueError(_go_json_error(output, exc))
    except RecursionError:
        # Python's parser stops at its recursion limit (about 1000 levels); Go's at 10000
        # with this message. Either way the output is not a usable document.
        err = ValueError("exceeded max depth")
    if not extract:
        raise err
    values = [v for v in (_try(b) for b in _fenced_blocks(output)) if v is not _NOTHING]
    if not values:
        values = _embedded_values(output)
    if len(values) == 1:
        return values[0]
    raise ValueError("output does not contain a JSON document" if not values
                     else "output contains multiple JSON documents")


_NOTHING = object()


def _try(text: str) -> Any:
    try:
        return _loads(text)
    except (ValueError, RecursionError):
        return _NOTHING


def _fenced_blocks(output: str) -> list[str]:
    """Bodies of ``` fences whose info string is empty or ``json``, in order."""
    blocks, offset = [], 0
    while True:
        start = output.find("```", offset)
        if start < 0:
            break
        header_end = output.find("\n", start)
        if header_end < 0:
            break
        language = output[start + 3:header_end].strip()
        end = output.find("```", header_end + 1)
        if end < 0:
            break
        if language == "" or language.lower() == "json":
            blocks.append(output[header_end + 1:end])
        offset = end + 3
    return blocks


def _embedded_values(output: str) -> list[Any]:
    """Every JSON object or array that starts somewhere in the text, left to right."""
    decoder = json.JSONDecoder(parse_constant=_no_constants)
    values, offset = [], 0
    while offset < len(output):
        if output[offset] not in "{[":
            offset += 1
            continue
        try:
            value, end = decoder.raw_decode(output, offset)
        except (ValueError, RecursionError):
            offset += 1
            continue
        values.append(value)
        offset = end
    return values


def _go_json_error(text: str, exc: json.JSONDecodeError | None) -> str:
    """Go's wording for the commonest syntax errors; Python's for the rest."""
    if exc is None:  # NaN, Infinity or -Infinity where a value starts
        stripped = text.lstrip(" \t\r\n")
        if stripped.startswith("-"):
            return f"invalid character {_quote_char(stripped[1])} in numeric literal"
        return f"invalid character {_quote_char(stripped[0])} looking for beginning of value"
    pos, msg = exc.pos, exc.msg
    if pos >= len(text) or msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    char = _quote_char(text[pos])
    if msg == "Expecting value":
        return f"invalid character {char} looking for beginning of value"
    if msg == "Extra data":
        return f"invalid character {char} after top-level value"
    if msg == "Expecting ':' delimiter":
        return f"invalid character {char} after object key"
    if msg == "Expecting ',' delimiter":
        where = "object key:value pair" if _innermost(text, pos) == "{" else "array element"
        return f"invalid character {char} after {where}"
    if msg.startswith("Expecting property name"):
        return f"invalid character {char} looking for beginning of object key string"
    if msg.startswith("Invalid control character"):
        return f"invalid character {char} in string literal"
    if msg.startswith("Invalid \\escape"):
        return f"invalid character {_quote_char(text[pos + 1]) if pos + 1 < len(text) else char} in string escape code"
    return str(exc)


def _innermost(text: str, pos: int) -> str:
    """The innermost open bracket before ``pos`` ('{' or '['), outside strings."""
    stack, in_string, escaped = [], False, False
    for ch in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _quote_char(ch: str) -> str:
    """Go's quoteChar: the first UTF-8 byte of the character, quoted."""
    byte = ch.encode("utf-8", "surrogatepass")[0]
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    special = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v", 92: "\\\\"}
    if byte in special:
        return f"'{special[byte]}'"
    c = chr(byte)
    if c.isprintable():
        return f"'{c}'"
    return f"'\\x{byte:02x}'" if byte < 0x80 else f"'\\u{byte:04x}'"


@hookimpl
def waza_register_graders(register):
    register(JsonSchemaGrader)
