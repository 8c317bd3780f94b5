#!/usr/bin/env bash
# Round-trip one AgentV assertion through waza, offline:
#   1. import assertion 1 of test contains-check from suite.yaml into a native grader;
#   2. run it in two native evals under the mock executor: one control that must pass
#      (its output contains "Hello") and one that must fail (it does not);
#   3. export the grader back to one AgentV assertion, and import that again.
# Needs bash and waza only. Usage: examples/interop/run.sh [WAZA COMMAND...]   (default: waza)
#   e.g. bash examples/interop/run.sh .venv/bin/python -m waza_core
# The scratch folder is reported and kept, on success and on failure; nothing is deleted.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "$#" -gt 0 ]; then waza=("$@"); else waza=(waza); fi
adapter=agentv-68df6d2206cea61f721d0445b405efcb5e94aff0-contains-v1
scratch="$(mktemp -d "${TMPDIR:-/tmp}/waza-interop-example.XXXXXX")"
trap 'echo "scratch folder (kept; inspect it before removing it): $scratch"' EXIT

fail() { echo "run.sh: FAILED: $*" >&2; exit 1; }
has() { [[ "$(<"$1")" == *"$2"* ]]; }

# Lines of a YAML file without its comments, to compare meanings rather than bytes.
content() { local line; while IFS= read -r line || [ -n "$line" ]; do [[ $line == \#* ]] || printf '%s\n' "$line"; done < "$1"; }

# 1. Import: stdout is one native grader mapping, stderr the projection notice.
if ! "${waza[@]}" interop import --adapter "$adapter" --test contains-check --assertion 1 \
    < "$here/suite.yaml" > "$scratch/one-native-grader.yaml" 2> "$scratch/import.stderr"; then
  fail "import: $(<"$scratch/import.stderr")"
fi
has "$scratch/import.stderr" "ASSERTION-ONLY PROJECTION" || fail "import printed no projection notice"
has "$scratch/one-native-grader.yaml" '- "Hello"' || fail "import wrote no contains_cs check"
echo "imported: $scratch/one-native-grader.yaml"

# 2. Place the grader in two native evals and run both under the mock executor, whose
#    output is "Mock response for: <prompt>" and "Task: <task name>".
make_eval() {  # make_eval DIR PROMPT
  local dir="$1" prompt="$2" line first=1
  mkdir -p "$dir/tasks"
  {
    printf '%s\n' "name: interop-$(basename "$dir")" "skill: interop-example" "config:" "  executor: mock" \
      "  trials_per_task: 1" "  timeout_seconds: 30" 'tasks: ["tasks/*.yaml"]' "graders:"
    while IFS= read -r line || [ -n "$line" ]; do
      if [[ $first == 1 && -n $line && $line != \#* ]]; then printf '  - %s\n' "$line"; first=0
      else printf '    %s\n' "$line"; fi
    done < "$scratch/one-native-grader.yaml"
  } > "$dir/eval.yaml"
  printf '%s\n' "id: control" "name: control" "inputs:" "  prompt: \"$prompt\"" > "$dir/tasks/control.yaml"
}
run_eval() {  # run_eval DIR EXPECTED_EXIT
  local rc=0
  "${waza[@]}" run "$1/eval.yaml" -o "$1/results.json" > "$1/run.stdout" 2> "$1/run.stderr" || rc=$?
  [ "$rc" = "$2" ] || fail "waza run $1/eval.yaml exited $rc, expected $2 (see $1/run.stderr)"
  echo "ran $(basename "$1") control: exit $rc as expected; results: $1/results.json"
}
make_eval "$scratch/passing" "Say Hello to the user"
make_eval "$scratch/failing" "Say goodbye to the user"
run_eval "$scratch/passing" 0
run_eval "$scratch/failing" 1

# 3. Export back to one AgentV assertion with an explicit metric, then import that again.
"${waza[@]}" interop export --adapter "$adapter" < "$scratch/one-native-grader.yaml" > "$scratch/agentv-assertion.yaml"
for want in 'type: "contains"' 'value: "Hello"' 'metric: "agentv-contains"'; do
  has "$scratch/agentv-assertion.yaml" "$want" || fail "export lacks $want"
done
echo "exported: $scratch/agentv-assertion.yaml"
{
  printf '%s\n' "name: round-trip" "tests:" "  - id: contains-check" "    input: Say hello world" "    assert:"
  first=1
  while IFS= read -r line || [ -n "$line" ]; do
    if [[ $first == 1 && -n $line && $line != \#* ]]; then printf '      - %s\n' "$line"; first=0
    else printf '        %s\n' "$line"; fi
  done < "$scratch/agentv-assertion.yaml"
} > "$scratch/round-trip-suite.yaml"
"${waza[@]}" interop import --adapter "$adapter" --test contains-check --assertion 1 \
  < "$scratch/round-trip-suite.yaml" > "$scratch/round-trip-grader.yaml" 2> "$scratch/round-trip-notice.txt"
[ "$(content "$scratch/round-trip-grader.yaml")" = "$(content "$scratch/one-native-grader.yaml")" ] \
  || fail "the round trip changed the grader"
echo "round trip kept the meaning (comments aside): $scratch/round-trip-grader.yaml"
echo "OK"
