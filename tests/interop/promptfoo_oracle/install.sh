#!/usr/bin/env bash
# Install the promptfoo oracle for tests/interop: the exact promptfoo pinned in
# package-lock.json, with `npm ci`. Idempotent and fast: does nothing when node_modules
# already matches the lockfile. Needs Node.js >= 20 and npm on PATH, and access to an npm
# registry the first time. Install scripts are not run (--ignore-scripts): promptfoo needs
# none, and some optional browser packages would download from outside the registry.
# Optional dependencies stay: promptfoo's database client loads a native build from one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "install.sh: $tool is not on PATH; the promptfoo oracle tests need Node.js >= 20 and npm" >&2
    exit 2
  fi
done

major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "install.sh: Node.js $(node --version) is too old; promptfoo 0.121 needs Node.js >= 20" >&2
  exit 2
fi

stamp="node_modules/.waza-oracle-lock.sha256"
want="$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha256").update(f.readFileSync("package-lock.json")).update(f.readFileSync("package.json")).digest("hex"))')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f node_modules/promptfoo/package.json ]; then
  exit 0
fi

npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
printf '%s' "$want" > "$stamp"
