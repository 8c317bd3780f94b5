"""A hook: prints the lifecycle point it runs at (hooks run without a shell)."""

import sys

print(f"hook: {sys.argv[1]}")
