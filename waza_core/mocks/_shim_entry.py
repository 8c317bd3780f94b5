"""Run by a command-mock shim as ``python -I <this file> --root R --name N -- args``.

``-I`` keeps the workspace (the shim's working directory) and PYTHONPATH off
``sys.path``; the folder holding the ``waza_core`` package is put there instead, so the
shim works for an installed waza and for a source checkout alike.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from waza_core.mocks.shim import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
