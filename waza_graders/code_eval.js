// Evaluator of the `code` grader's JavaScript assertions (run by node, never imported).
//
// The evaluation context is waza's (internal/graders/data/eval_wrapper.js): output, outcome,
// transcript, tool_calls, errors, duration_ms, and the safe globals Array Object String Number
// Boolean Math JSON RegExp parseInt parseFloat isNaN isFinite undefined NaN Infinity True False,
// in a fresh node:vm context per run, each assertion limited in time by the vm (argv[2], ms).
//
// Protocol (one JSON document per line, both ways): each request line holds the run's payload
// and its `assertions`; the evaluator answers `null` once the request is parsed, then one JSON
// string per assertion: "" (passed), "fail" (falsy), or the error text. It serves requests until
// stdin closes, so the parent may keep it warm. Do not print anything else to stdout.
"use strict";

const vm = require("node:vm");
const readline = require("node:readline");

const timeoutMs = Number(process.argv[2]) > 0 ? Number(process.argv[2]) : 5000;
const MAX_MESSAGE = 4096;

function context(data) {
  const transcript = Array.isArray(data.transcript) ? data.transcript : [];
  return {
    output: data.output,
    outcome: data.outcome,
    transcript: transcript,
    tool_calls: data.tool_calls,
    errors: transcript.filter(
      (t) =>
        (t && t.type && String(t.type).includes("error")) ||
        (t && t.content && String(t.content).includes("error"))
    ),
    duration_ms: data.duration_ms || 0,
    Array, Object, String, Number, Boolean, Math, JSON, RegExp,
    parseInt, parseFloat, isNaN, isFinite,
    undefined, NaN, Infinity,
    True: true,
    False: false,
  };
}

function verdict(expression, ctx) {
  try {
    const result = vm.runInContext(expression, ctx, { timeout: timeoutMs });
    return result ? "" : "fail";
  } catch (err) {
    let message;
    try {
      message = String(err);
    } catch (_) {
      message = "error";
    }
    return message.length <= MAX_MESSAGE ? message : message.slice(0, MAX_MESSAGE) + "...";
  }
}

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line) {
    return;
  }
  const data = JSON.parse(line);
  const ctx = context(data);
  vm.createContext(ctx);
  process.stdout.write("null\n");
  for (const assertion of data.assertions || []) {
    process.stdout.write(JSON.stringify(verdict(assertion, ctx)) + "\n");
  }
});
