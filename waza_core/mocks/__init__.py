"""Mocks for what an agent touches outside its workspace, and per-run task inputs.

- ``command_mocks``: PATH shims that answer an agent's command-line calls from
  fixtures (:mod:`.command` on waza's side, :mod:`.shim` in the shim process).
- ``mcp_mocks``: a stdio MCP server answering tool calls from fixtures
  (:mod:`.mcp_server`, matching rules in :mod:`.mcp_match`).
- :mod:`.spec`: parsing and checking the suite keys; :mod:`.run` ties one run's
  mocks, repositories, working directory and environment together.

Modules that run inside a shim or an MCP server child process import only the
standard library (and RE2 / the MCP SDK where needed), never the rest of waza.
See docs/mocks.md.
"""

#: the keys of a task document that give its runs something to prepare (command mocks,
#: repositories, a working folder, environment), as bytes for ``TaskSpec.may_hold``; here,
#: not in :mod:`.spec`, so that the run preparer's early answer (most suites use none of
#: them) does not import the specs' attrs classes (~1.5 ms of every run)
TASK_PLAN_KEYS = (b"command_mocks", b"repos", b"workdir", b"environment")
