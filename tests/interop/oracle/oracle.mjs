// The AgentV oracle for tests/interop: asks the real, pinned @agentv/core, never a copy of it.
//
// Reads one JSON request on stdin, {"ops": [...]}, and writes {"results": [...]} on stdout,
// one result per op. AgentV's own console output is captured per op, so it cannot corrupt
// the JSON. An op that throws answers {error, logs}. Ops:
//   {op: "contains", pairs: [[output, value], ...]}
//       -> [{score, passed, text, grader_score, grader_verdict}] from runContainsAssertion
//          and from the `contains` grader of AgentV's builtin grader registry.
//   {op: "load", yaml, outputs?: [string]}
//       -> {tests: [{id, assertions}], logs, scores?} via loadTestSuite on a file in a fresh
//          temp dir; with outputs, every loaded contains assertion is graded on each output.
//   {op: "select", yaml, test, index}
//       -> {raw, removed, logs}: the raw assert item as AgentV's YAML parser reads it, and the
//          loaded assertions that disappear when that one raw item is removed.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  createBuiltinRegistry,
  loadTestSuite,
  loadTestSuiteFromYamlObject,
  parseYamlValue,
  runContainsAssertion,
} from "@agentv/core";

const logs = [];
for (const level of ["log", "info", "warn", "error", "debug"]) {
  console[level] = (...args) => logs.push(args.map(String).join(" "));
}

function takeLogs() {
  return logs.splice(0, logs.length);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const registry = createBuiltinRegistry();

async function gradeContains(value, output) {
  const grader = await registry.create({ name: "oracle", type: "contains", value }, {});
  const result = await grader.evaluate({ candidate: output });
  return { score: result.score, verdict: result.verdict };
}

async function opContains(op) {
  const out = [];
  for (const [output, value] of op.pairs) {
    const r = runContainsAssertion(output, value);
    const g = await gradeContains(value, output);
    out.push({
      score: r.score,
      passed: r.assertions[0].passed,
      text: r.assertions[0].text,
      grader_score: g.score,
      grader_verdict: g.verdict,
    });
  }
  return out;
}

function plainAssertions(test) {
  return (test.assertions ?? []).map((a) => ({ ...a }));
}

async function withSuiteFile(yaml, fn) {
  const dir = await mkdtemp(path.join(tmpdir(), "waza-agentv-oracle-"));
  try {
    const file = path.join(dir, "suite.yaml");
    await writeFile(file, yaml, "utf8");
    return await fn(file, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function opLoad(op) {
  return withSuiteFile(op.yaml, async (file, dir) => {
    let suite;
    try {
      suite = await loadTestSuite(file, dir);
    } catch (err) {
      return { error: String(err?.message ?? err), logs: takeLogs() };
    }
    const tests = suite.tests.map((t) => ({ id: t.id, assertions: plainAssertions(t) }));
    const result = { tests, logs: takeLogs() };
    if (op.outputs) {
      result.scores = [];
      for (const t of tests) {
        for (const a of t.assertions) {
          if (a.type !== "contains") continue;
          const row = { test: t.id, name: a.name, value: a.value, grades: [] };
          for (const output of op.outputs) row.grades.push(await gradeContains(a.value, output));
          result.scores.push(row);
        }
      }
    }
    return result;
  });
}

function multisetMinus(all, some) {
  const left = [...all];
  for (const s of some) {
    const key = JSON.stringify(s);
    const i = left.findIndex((a) => JSON.stringify(a) === key);
    if (i >= 0) left.splice(i, 1);
  }
  return left;
}

async function opSelect(op) {
  return withSuiteFile(op.yaml, async (file, dir) => {
    const raw = parseYamlValue(op.yaml);
    const test = raw.tests.find((t) => t && t.id === op.test);
    const item = test.assert[op.index];
    const full = await loadTestSuite(file, dir);
    const without = structuredClone(raw);
    without.tests.find((t) => t && t.id === op.test).assert.splice(op.index, 1);
    const reduced = await loadTestSuiteFromYamlObject(file, without, dir);
    const pick = (suite) => plainAssertions(suite.tests.find((t) => t.id === op.test) ?? {});
    return { raw: item, removed: multisetMinus(pick(full), pick(reduced)), logs: takeLogs() };
  });
}

const OPS = { contains: opContains, load: opLoad, select: opSelect };

const request = JSON.parse(await readStdin());
const results = [];
for (const op of request.ops) {
  const handler = OPS[op.op];
  if (!handler) throw new Error(`unknown op ${op.op}`);
  try {
    results.push(await handler(op));
  } catch (err) {
    results.push({ error: String(err?.message ?? err), logs: takeLogs() });
  }
}
process.stdout.write(JSON.stringify({ results }));
