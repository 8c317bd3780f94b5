#!/usr/bin/env python3
"""A toy agent for examples/mcp-mocks: a minimal MCP client (stdio, JSON-RPC lines).

It reads the servers from the --mcp-config file that waza writes for the run
({"mcpServers": {name: {"command", "args"}}}), the format Claude Code's --mcp-config
takes, starts the inventory server and calls its tools. Standard library only, so the
example runs with any python3; real agents do this with their own MCP client.
"""

import argparse
import json
import re
import subprocess

parser = argparse.ArgumentParser()
parser.add_argument("--mcp-config", required=True)
parser.add_argument("prompt")
opts = parser.parse_args()

with open(opts.mcp_config, encoding="utf-8") as fh:
    server = json.load(fh)["mcpServers"]["inventory"]
proc = subprocess.Popen([server["command"], *server["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        text=True)
next_id = 0


def request(method, params):
    global next_id
    next_id += 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n")
    proc.stdin.flush()
    while True:
        message = json.loads(proc.stdout.readline())
        if message.get("id") == next_id:
            return message


def call(tool, arguments):
    result = request("tools/call", {"name": tool, "arguments": arguments})["result"]
    text = "".join(c.get("text", "") for c in result["content"])
    return (f"tool error: {text}", None) if result.get("isError") else (None, json.loads(text))


request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "toy-agent", "version": "1"}})
proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
proc.stdin.flush()
tools = [t["name"] for t in request("tools/list", {})["result"]["tools"]]

lines = [f"tools: {', '.join(tools)}"]
owner = re.search(r"items of (\w+)", opts.prompt)
if owner:
    error, value = call("list_items", {"owner": owner.group(1)})
    lines.append(error or f"{owner.group(1)} holds: {', '.join(value['items'])}")
if "stock" in opts.prompt:
    error, value = call("get_stock", {"item": "laptop"})
    lines.append(error or f"stock of laptop: {value}")
proc.stdin.close()
proc.wait(timeout=30)
print("\n".join(lines))
