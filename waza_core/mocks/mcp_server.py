"""The ``mcp_mocks`` stdio MCP server, built on the official MCP Python SDK (``mcp``).

An agent starts it (waza hands the agent its command line) with the mock's resolved
configuration; the SDK speaks the protocol (initialize and version negotiation,
``tools/list``, ``tools/call``, errors for unknown methods and bad parameters) and
:mod:`.mcp_match` decides the answers. Every ``tools/call`` is recorded in the run's
log folder, so waza can put the calls in the run's evidence (``mcp_invocations``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from waza_core.gofmt import go_quote
from waza_core.mocks import mcp_match
from waza_core.mocks.records import MAX_RECORD_BYTES, write_record
from waza_core.mocks.sanitize import REDACTED, TOKEN_SHAPES, secret_values, sensitive_name
from waza_core.untrusted import MAX_DEPTH, UntrustedInput, check_plain

SERVER_VERSION = "0.0.0-mock"
#: the largest arguments a call record keeps (room left for the record's other fields)
MAX_ARGUMENTS_BYTES = MAX_RECORD_BYTES - 64 * 1024


def sanitize_value(value: Any, secrets_: list[str]) -> Any:
    """Arguments as recorded: values under sensitive keys and secret-shaped text redacted."""
    if isinstance(value, dict):
        return {k: REDACTED if sensitive_name(str(k)) and v not in (None, "") else sanitize_value(v, secrets_)
                for k, v in value.items()}
    if isinstance(value, list):
        return [sanitize_value(v, secrets_) for v in value]
    if isinstance(value, str):
        for secret in secrets_:
            value = value.replace(secret, REDACTED)
        return TOKEN_SHAPES.sub(REDACTED, value)
    return value


def record(log_dir: str | None, server: str, tool: str, args: dict, index: int, is_error: bool) -> None:
    if log_dir:
        write_record(log_dir, {"server": server, "tool": tool, **recordable_arguments(args),
                               "response_index": index, "is_error": is_error})


def recordable_arguments(args: dict) -> dict:
    """``{"arguments": ...}`` as waza reads a record back (:func:`~waza_core.mocks.records.read_records`:
    strict JSON, 100 levels, 1 MiB), sanitized; arguments it would refuse (a ``NaN`` the
    SDK let through, nesting too deep, a 64-bit overflow, too big) are recorded as ``{}``
    with ``arguments_dropped`` saying why, so the call itself is never lost from the evidence."""
    try:
        clean = sanitize_value(args, secret_values(os.environ))
        check_plain(clean, "the arguments", max_depth=MAX_DEPTH - 2)  # inside the record and its invocation
        size = len(json.dumps(clean, allow_nan=False))
    except (UntrustedInput, ValueError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, UntrustedInput) else f"not JSON waza reads ({type(exc).__name__})"
        return {"arguments": {}, "arguments_dropped": reason}
    if size > MAX_ARGUMENTS_BYTES:
        return {"arguments": {}, "arguments_dropped": f"the arguments: {size} bytes of JSON, more than the "
                                                      f"{MAX_ARGUMENTS_BYTES} a call record keeps"}
    return {"arguments": clean}


def build_server(config: dict, log_dir: str | None):
    """A low-level SDK server answering from ``config`` (``name`` and ``tools``)."""
    # deferred: mcp adds ~1862.1 ms to importing this module
    from mcp import types
    from mcp.server.lowlevel import Server

    name = str(config.get("name") or "mock")

    async def list_tools(_ctx, _params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
            for t in mcp_match.tool_list(config)])

    async def call_tool(_ctx, params) -> types.CallToolResult:
        args = params.arguments if params.arguments is not None else {}
        try:
            text, is_error, index = mcp_match.call(config, params.name, args)
        except (ValueError, TypeError, RecursionError) as exc:  # arguments no fixture can be matched against
            text, is_error, index = (f"mcp mock {go_quote(name)}: the arguments of {go_quote(params.name)} cannot "
                                     f"be matched ({type(exc).__name__}); add a matching fixture response", True, -1)
        try:
            record(log_dir, name, params.name, args, index, is_error)
        except OSError as exc:
            print(f"mcp mock {name!r}: cannot record the call: {exc}", file=sys.stderr)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    return Server(name, version=SERVER_VERSION, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(config: dict, log_dir: str | None) -> None:
    # deferred: mcp.server.stdio adds ~1434.3 ms to importing this module
    from mcp.server.stdio import stdio_server

    server = build_server(config, log_dir)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="waza-mcp-mock", description="waza's mcp_mocks stdio server")
    parser.add_argument("--config-file", required=True)
    parser.add_argument("--log-dir")
    opts = parser.parse_args(argv)
    try:
        with open(opts.config_file, encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"waza mcp mock: cannot read {opts.config_file}: {exc}", file=sys.stderr)
        return 2
    try:
        # deferred: anyio is optional; a missing one is handled here
        import anyio
    except ImportError:
        print("waza mcp mock: the MCP SDK is not installed (pip install 'waza[mcp]')", file=sys.stderr)
        return 2
    try:
        anyio.run(serve, config, opts.log_dir)
    except KeyboardInterrupt:
        pass
    return 0
