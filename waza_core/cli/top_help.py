"""``waza --help`` at 80 columns, written by scripts/gen_cli_docs.py: do not edit.

Printed by :func:`waza_core.cli.main` without importing typer (~100 ms); a test
keeps it equal to what typer prints."""

TEXT = (
    'Usage: waza [OPTIONS] COMMAND [ARGS]...\n'
    '\n'
    '  Evaluate AI agents and skills: run eval suites, grade runs, optimize,\n'
    '  translate assertions.\n'
    '\n'
    'Options:\n'
    '  -V, --version         Print the version and exit.\n'
    '  --install-completion  Install completion for the current shell.\n'
    '  --show-completion     Show completion for the current shell, to copy it or\n'
    '                        customize the installation.\n'
    '  --help                Show this message and exit.\n'
    '\n'
    'Commands:\n'
    '  run       Run an eval suite.\n'
    "  grade     Grade saved runs with a suite's graders and print a JSON...\n"
    '  validate  Check a suite as `waza run` would before its first run,...\n'
    '  migrate   Rewrite older eval suites (eval.yaml and the task files it...\n'
    '  get       Resolve remote grader refs and update waza.lock.\n'
    '  schema    Print a JSON Schema.\n'
    '  plugins   List every plugin: name, distribution, version, what it...\n'
    '  report    Write reports of a saved results file: the same bytes `waza...\n'
    '  gate      Gate current results against a baseline for CI.\n'
    '  compare   Compare results files: per-task and summary deltas of score,...\n'
    '  init      Create a starter project: suite (mock executor), .waza.yaml,...\n'
    '  new       Create a new eval suite or task from a template (never...\n'
    '  cache     Manage the result cache of `waza run --cache`.\n'
    '  interop   Translate between foreign eval formats (dialects) and waza:...\n'
    '  optimize  Optimize a skill or context with an optimizer adapter,...\n'
)
