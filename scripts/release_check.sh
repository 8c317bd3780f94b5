#!/usr/bin/env bash
# What a user installs, checked as a user gets it: build the sdist, build the wheel FROM that sdist
# (python -m build does both), `twine check` them, install the wheel and the sdist each into a
# fresh virtual environment (not editable), and use each from a folder outside the checkout:
# every built-in plugin loads, `waza init` then `waza run`, the quickstart with the junit and html
# reporters, `waza schema results`. Exit 0 when every check holds; the first failure stops it.
#
#   bash scripts/release_check.sh [PYTHON]     (PYTHON needs pip 22.3 or later, `build` and `twine`:
#                                               pip install build twine)
#
# Dependencies of the wheel come from the package index, as they would for a user.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$PWD
python=${1:-python3}
# a user's shell has no path into this checkout: what runs must be what was installed
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP
work=$(mktemp -d "${TMPDIR:-/tmp}/waza-release.XXXXXX")
trap 'rm -rf "$work"' EXIT

step() { printf 'release check: %s\n' "$*"; }

step "build the sdist, then the wheel from it"
"$python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
sdist=$(ls "$work"/dist/waza-*.tar.gz)
wheel=$(ls "$work"/dist/waza-*-py3-none-any.whl)
step "twine check"
"$python" -m twine check --strict "$sdist" "$wheel"

# every package of the project is in both archives
in_sdist=$(tar -tzf "$sdist")
in_wheel=$("$python" -m zipfile -l "$wheel")
for pkg in waza_core waza_graders waza_adapters waza_interop waza_reporters waza_events; do
  grep -q "/$pkg/__init__.py$" <<<"$in_sdist" || { echo "sdist lacks $pkg" >&2; exit 1; }
  grep -q "^$pkg/__init__.py " <<<"$in_wheel" || { echo "wheel lacks $pkg" >&2; exit 1; }
done

smoke() {  # smoke NAME ARCHIVE: a fresh venv with ARCHIVE installed, used from outside the checkout
  local name=$1 archive=$2 venv="$work/venv-$1" home="$work/use-$1"
  step "$name: install $(basename "$archive") into a fresh virtual environment"
  # the venv gets no pip of its own (ensurepip: about 4 s of CPU); this script's pip installs into
  # it (pip --python), and without compiling every module of every dependency to bytecode (what
  # runs below compiles what it imports): about half the CPU time of a plain install
  "$python" -m venv --without-pip "$venv"
  "$python" -m pip --python "$venv/bin/python" install --quiet --no-compile --disable-pip-version-check "$archive" \
    2>&1 | { grep -v "^WARNING: Location" || true; }
  mkdir -p "$home" && cd "$home"
  local waza="$venv/bin/waza"
  # the installed package is the one that runs, not the checkout
  "$venv/bin/python" - "$checkout" <<'EOF'
import sys, pathlib, waza_core
where = pathlib.Path(waza_core.__file__).resolve()
assert pathlib.Path(sys.argv[1]).resolve() not in where.parents, f"imported from the checkout: {where}"
EOF
  step "$name: every built-in plugin loads"
  WAZA_DISABLE_PLUGIN_AUTOLOAD=1 "$waza" plugins --json >plugins.json
  "$venv/bin/python" - "$checkout" <<'EOF'
import json, pathlib, sys
listed = json.load(open("plugins.json"))
plugins = listed["plugins"] if isinstance(listed, dict) else listed
loaded = {p["name"] for p in plugins if p.get("source") == "builtin" and not p.get("error")}
expected = set()
for pkg in ("waza_graders", "waza_adapters", "waza_interop", "waza_reporters", "waza_events"):
    for f in (pathlib.Path(sys.argv[1]) / pkg).glob("*.py"):
        if not f.name.startswith("_") and "hookimpl" in f.read_text(encoding="utf-8"):  # a plugin module
            expected.add(f"{pkg}.{f.stem}")
broken = [p for p in plugins if p.get("error")]
missing = sorted(expected - loaded)
assert not broken and not missing, f"broken: {broken}, missing: {missing}"
print(f"  {len(loaded)} built-in plugins loaded")
EOF
  step "$name: waza init, then waza run"
  "$waza" init proj >/dev/null
  (cd proj && "$waza" run eval.yaml -o results.json >run.log 2>&1) || { cat proj/run.log; exit 1; }
  step "$name: the quickstart with the junit and html reporters"
  cp -r "$checkout/examples/quickstart" quickstart
  "$waza" run quickstart/eval.yaml -o quick.json --reporter junit:quick.xml --reporter html:quick.html >quick.log 2>&1 \
    || { cat quick.log; exit 1; }
  grep -q "<testsuite" quick.xml && grep -qi "<html" quick.html
  step "$name: waza schema results, and the results file validates against it"
  "$waza" schema results >schema.json
  "$venv/bin/python" -c "
import json, jsonschema
jsonschema.validate(json.load(open('quick.json')), json.load(open('schema.json')))
jsonschema.validate(json.load(open('proj/results.json')), json.load(open('schema.json')))"
  cd "$checkout"
}

# the two installs are independent (own venv, own folder): run them side by side, each into
# its own log, and print the logs in order
smoke wheel "$wheel" >"$work/smoke-wheel.log" 2>&1 &
wheel_pid=$!
smoke sdist "$sdist" >"$work/smoke-sdist.log" 2>&1 &
sdist_pid=$!
failed=0
wait "$wheel_pid" || failed=1
cat "$work/smoke-wheel.log"
wait "$sdist_pid" || failed=1
cat "$work/smoke-sdist.log"
if [ "$failed" != 0 ]; then
  echo "release check: a check failed (above)" >&2
  exit 1
fi
step "all checks passed"
