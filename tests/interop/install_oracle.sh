#!/usr/bin/env bash
# Install one pinned npm oracle of tests/interop: the exact packages of FOLDER's
# package-lock.json, with `npm ci`. Idempotent and fast: does nothing when node_modules
# already matches the lockfile (a stamp of its hash) and PACKAGE is there. Needs Node.js >= 20
# and npm on PATH, and access to an npm registry the first time. Install scripts are never run
# (--ignore-scripts); NPM_CI_FLAGS are added to `npm ci` (e.g. --omit=optional).
#
# usage: install_oracle.sh FOLDER PACKAGE WHAT [NPM_CI_FLAGS...]
#   FOLDER   the oracle's folder (package.json, package-lock.json)
#   PACKAGE  the package that must be installed (node_modules/PACKAGE/package.json)
#   WHAT     what needs it, for the error messages ("the AgentV conformance tests")
# Each oracle's install.sh calls this with its own values.
set -euo pipefail

folder="$1"; package="$2"; what="$3"; shift 3
cd "$folder"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "install.sh: $tool is not on PATH; $what need Node.js >= 20 and npm" >&2
    exit 2
  fi
done

major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "install.sh: Node.js $(node --version) is too old; $what need Node.js >= 20" >&2
  exit 2
fi

stamp="node_modules/.waza-oracle-lock.sha256"
want="$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha256").update(f.readFileSync("package-lock.json")).update(f.readFileSync("package.json")).digest("hex"))')"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "node_modules/$package/package.json" ]; then
  exit 0
fi

npm ci "$@" --ignore-scripts --no-audit --no-fund --loglevel=error >&2
printf '%s' "$want" > "$stamp"
