#!/usr/bin/env bash
# Install the AgentV oracle for tests/interop: the exact @agentv/core pinned in
# package-lock.json, with `npm ci`. Idempotent: does nothing when node_modules already
# matches the lockfile. Needs Node.js >= 20 and npm on PATH, and access to an npm registry.
# Install scripts are not run (--ignore-scripts); optional packages (agent CLI binaries,
# OpenTelemetry) are left out because the oracle never uses them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "install.sh: $tool is not on PATH; the AgentV conformance tests need Node.js >= 20 and npm" >&2
    exit 2
  fi
done

major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "install.sh: Node.js $(node --version) is too old; the AgentV oracle needs Node.js >= 20" >&2
  exit 2
fi

stamp="node_modules/.waza-oracle-lock.sha256"
want="$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha256").update(f.readFileSync("package-lock.json")).update(f.readFileSync("package.json")).digest("hex"))')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f node_modules/@agentv/core/package.json ]; then
  exit 0
fi

npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >&2
printf '%s' "$want" > "$stamp"
