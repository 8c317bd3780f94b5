"""Run by an agent as an MCP server: ``python -I <this file> --config-file F --log-dir D``.

See :mod:`waza_core.mocks.mcp_server`; ``-I`` keeps the agent's working directory and
PYTHONPATH off ``sys.path``, and the folder holding ``waza_core`` is put there instead.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from waza_core.mocks.mcp_server import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
