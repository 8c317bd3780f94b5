"use strict";
// The waza HTML report. The page starts from the JSON index #waza-data (one small entry
// per task); each task's runs are in their own JSON element, #waza-task-N, parsed only
// when the task is opened. Every piece of text reaches the page through textContent
// (never innerHTML), so agent output is shown as text and cannot become markup or script.
(function () {
  var DATA = JSON.parse(document.getElementById("waza-data").textContent);
  var app = document.getElementById("app");

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false) node.setAttribute(k, String(attrs[k]));
      });
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    });
    return node;
  }
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function num(v, digits) { return isNum(v) ? v.toFixed(digits) : "–"; }
  function pct(v) { return isNum(v) ? (v * 100).toFixed(1) + "%" : "–"; }
  function ms(v) { return isNum(v) ? Math.round(v) + " ms" : "–"; }
  function statusClass(s) { return "status s-" + (s === "passed" || s === "failed" || s === "error" ? s : "na"); }
  function text(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v, null, 2);
  }
  // Long text shows its first max_text characters and a button for the rest, so one
  // huge output cannot stall the page.
  function longText(tag, attrs, value) {
    var whole = text(value), limit = DATA.max_text || 20000;
    if (whole.length <= limit) return el(tag, attrs, [whole]);
    var node = el(tag, attrs, [whole.slice(0, limit)]);
    var more = el("button", { type: "button", "class": "show-all" }, ["show all " + whole.length + " characters"]);
    more.addEventListener("click", function () { node.textContent = whole; more.remove(); });
    return el("div", null, [node, more]);
  }
  function card(label, value, cls) { return el("div", { "class": "card" }, [label, el("b", { "class": cls || null }, [value])]); }
  // runs: [number, status, score, tokens] per trial, from the index
  function spread(runs) {
    return el("span", { "class": "spread", "aria-label": "trial spread" }, runs.map(function (r) {
      return el("i", { "class": r[1], title: "trial " + r[0] + ": " + r[1] + " (score " + num(r[2], 2) + ")" });
    }));
  }

  // a task's trials in words beside its dots: passed out of graded, and the score range when there are several
  function trialSummary(runs) {
    var graded = runs.filter(function (r) { return r[1] !== "n/a" && r[1] !== "skipped"; });
    var passed = graded.filter(function (r) { return r[1] === "passed"; }).length;
    var scores = runs.map(function (r) { return r[2]; }).filter(isNum);
    var parts = [graded.length ? passed + "/" + graded.length + " passed" : "not graded"];
    if (runs.length > 1 && scores.length) parts.push("score " + num(Math.min.apply(null, scores), 2) + "–" + num(Math.max.apply(null, scores), 2));
    return el("div", { "class": "sub trial-summary" }, [parts.join(" · ")]);
  }

  // an A/B run: the paired test's line (the words every report uses) and each task's change
  function skillImpact(block) {
    var cls = /^significant/.test(block.verdict) ? "verdict-significant" : "verdict-noise";
    var box = el("section", { id: "skill-impact" }, [el("h2", null, ["Skill impact"]),
      el("div", { "class": "cards" }, [card("verdict", block.verdict || "not computed", cls)]),
      el("p", { "class": "significance" }, [block.line])]);
    if (block.source) {
      box.appendChild(el("p", { "class": "sub" }, ["Baseline from " + block.source.file + " (" +
        (block.source.part === "baseline_outcome" ? "its without-skills pass" : "the whole file") + ", run " +
        block.source.eval_id + "); " + block.source.tasks_compared + " task(s) compared."]));
      block.source.warnings.forEach(function (w) { box.appendChild(el("p", { "class": "sub warning" }, [w])); });
    }
    if (block.tasks.length) {
      var table = el("table", null, [el("thead", null, [el("tr", null, [el("th", null, ["Task"]),
        el("th", { "class": "num" }, [block.source && block.source.part !== "baseline_outcome" ? "Baseline" : "Without skills"]),
        el("th", { "class": "num" }, ["With skills"]),
        el("th", { "class": "num" }, ["Change"])])])]);
      var body = el("tbody");
      block.tasks.slice(0, 200).forEach(function (t) {
        body.appendChild(el("tr", null, [el("td", null, [t.name, el("div", { "class": "sub" }, [t.id])]),
          el("td", { "class": "num" }, [pct(t.baseline)]), el("td", { "class": "num" }, [pct(t["with"])]),
          el("td", { "class": "num" }, [isNum(t.delta) ? (t.delta > 0 ? "+" : "") + (t.delta * 100).toFixed(0) + " pp" : "–"])]));
      });
      table.appendChild(body);
      box.appendChild(table);
      if (block.tasks.length > 200) box.appendChild(el("p", { "class": "sub" }, ["… " + (block.tasks.length - 200) + " more tasks in the results file."]));
    }
    return box;
  }

  // waza grade --repeat K: how often each judge agreed with itself (docs/statistics.md)
  function judgeAgreement(block) {
    var box = el("section", { id: "judge-agreement" }, [el("h2", null, ["Judge agreement"]),
      el("p", { "class": "sub" }, ["Each judge was asked " + (block.repeat || "?") + " times per run; stable at Krippendorff's alpha ≥ " + num(block.min_alpha, 3) + "."])]);
    if (!block.graders.length) {
      box.appendChild(el("p", null, ["No prompt (judge) grader in the graded tasks: nothing was repeated."]));
      return box;
    }
    var head = ["Judge", "Type", "Agreement", "Alpha", "Score alpha", "Unanimous runs", "Errors", ""];
    var table = el("table", null, [el("thead", null, [el("tr", null, head.map(function (c, i) {
      return el("th", { "class": i >= 2 && i <= 6 ? "num" : null }, [c]); }))])]);
    var body = el("tbody");
    block.graders.forEach(function (g) {
      var verdict = !g.runs_compared ? "not measured" : g.unstable ? "unstable" : "stable";
      body.appendChild(el("tr", null, [el("td", null, [g.name]), el("td", null, [g.type]),
        el("td", { "class": "num" }, [pct(g.percent_agreement)]),
        el("td", { "class": "num", title: g.alpha_reason || null }, [isNum(g.alpha) ? num(g.alpha, 3) : "n/a",
          Array.isArray(g.alpha_ci) && g.alpha_ci.length === 2 ? el("div", { "class": "sub" }, ["95% CI " + num(g.alpha_ci[0], 3) + " to " + num(g.alpha_ci[1], 3)]) : null]),
        el("td", { "class": "num" }, [isNum(g.score_alpha) ? num(g.score_alpha, 3) : "n/a"]),
        el("td", { "class": "num" }, [(g.runs_unanimous || 0) + "/" + (g.runs_compared || 0)]),
        el("td", { "class": "num" }, [String(g.judgment_errors || 0)]),
        el("td", null, [el("span", { "class": g.unstable ? "badge flaky" : "badge" }, [verdict])])]));
    });
    table.appendChild(body);
    box.appendChild(table);
    return box;
  }

  document.title = DATA.title;
  if (DATA.kind === "optimizer-report") renderOptimizer(); else renderResults();

  // -- results files ----------------------------------------------------------------
  // Failure triage (docs/triage.md): runs per category, the next action, the tasks; the audit's findings
  function renderTriage(groups, audit) {
    if (groups.length) {
      app.appendChild(el("h2", null, ["Failure triage"]));
      var tb = el("tbody");
      groups.forEach(function (g) {
        var names = g.shown.slice(0, 10).map(function (x) { return x[0] + ": " + x[1]; });
        if (g.tasks > names.length) names.push("… and " + (g.tasks - names.length) + " more task(s)");
        tb.appendChild(el("tr", { "class": "triage-" + g.category }, [el("td", null, [el("b", null, [g.title])]),
          el("td", { "class": "num" }, [String(g.runs)]), el("td", null, [el("pre", { "class": "feedback" }, [names.join("\n")])]),
          el("td", null, [g.action])]));
      });
      app.appendChild(el("table", { id: "triage" }, [el("thead", null, [el("tr", null, [el("th", null, ["Category"]),
        el("th", { "class": "num" }, ["Runs"]), el("th", null, ["Tasks"]), el("th", null, ["Next action"])])]), tb]));
    }
    if (isObj(audit)) {
      var vt = Array.isArray(audit.vacuous_tasks) ? audit.vacuous_tasks : [];
      var vg = Array.isArray(audit.vacuous_graders) ? audit.vacuous_graders.filter(isObj) : [];
      app.appendChild(el("p", { id: "audit" }, ["Audit (do-nothing agent, " + text(audit.tasks_audited) + " task(s)): " +
        (vt.length ? vt.length + " vacuous task(s): " + vt.slice(0, 20).join(", ") : "no task passes with no agent") +
        (vg.length ? " · " + vg.length + " vacuous grader(s): " + vg.slice(0, 20).map(function (g) { return g.task_id + "/" + g.grader; }).join(", ") : "")]));
    }
  }

  function renderResults() {
    var h = DATA.header, s = h.summary || {}, tasks = DATA.tasks;
    tasks.forEach(function (t, i) { t._index = i; });
    var failing = (s.failed || 0) + (s.errors || 0);
    app.appendChild(el("h1", null, [DATA.title]));
    app.appendChild(el("p", { "class": "meta" }, [[
      h.skill ? "skill " + h.skill : null, "model " + (h.model || "(default)"), "executor " + (h.engine || "?"),
      h.trials ? h.trials + " trial(s) per task" : null, h.timestamp, h.waza_version ? "waza " + h.waza_version : null,
      h.schema_version ? "schema " + h.schema_version : null].filter(Boolean).join(" · ")]));
    var cards = el("div", { "class": "cards", id: "summary" }, [
      card("verdict", failing || h.incomplete ? "FAIL" : "PASS", failing || h.incomplete ? "verdict-fail" : "verdict-pass"),
      card("tasks", String(s.total_tests !== undefined ? s.total_tests : tasks.length)),
      card("passed", String(s.succeeded || 0)), card("failed", String(s.failed || 0)),
      card("errors", String(s.errors || 0)), card("not graded", String(s.skipped || 0)),
      card("success rate", pct(s.success_rate)), card("aggregate score", num(s.aggregate_score, 3))]);
    if (typeof s.cached_runs === "number") cards.appendChild(card("runs from cache", String(s.cached_runs)));
    if (h.incomplete) cards.appendChild(card("run", "INCOMPLETE", "verdict-fail"));
    app.appendChild(cards);
    renderTriage(h.triage || [], h.audit);
    if (h.judge_agreement) app.appendChild(judgeAgreement(h.judge_agreement));
    if (h.skill_impact) app.appendChild(skillImpact(h.skill_impact));

    var flaky = tasks.filter(function (t) { return t.flaky; });
    if (flaky.length) {
      app.appendChild(el("h2", null, ["Flaky tasks (" + flaky.length + ")"]));
      var ftable = el("table", { id: "flaky" }, [el("thead", null, [el("tr", null, [
        el("th", null, ["Task"]), el("th", { "class": "num" }, ["Pass rate"]), el("th", { "class": "num" }, ["Min score"]),
        el("th", { "class": "num" }, ["Max score"]), el("th", null, ["Trial spread"])])])]);
      var fbody = el("tbody");
      flaky.slice(0, 200).forEach(function (t) {
        var scores = t.runs.map(function (r) { return r[2]; }).filter(isNum);
        fbody.appendChild(el("tr", null, [el("td", null, [t.name, el("div", { "class": "sub" }, [t.id])]),
          el("td", { "class": "num" }, [pct(t.pass_rate)]),
          el("td", { "class": "num" }, [scores.length ? num(Math.min.apply(null, scores), 2) : "–"]),
          el("td", { "class": "num" }, [scores.length ? num(Math.max.apply(null, scores), 2) : "–"]),
          el("td", null, [spread(t.runs)])]));
      });
      ftable.appendChild(fbody);
      app.appendChild(ftable);
      if (flaky.length > 200) app.appendChild(el("p", { "class": "sub" }, ["… " + (flaky.length - 200) + " more: filter the table with “flaky only”."]));
    }

    app.appendChild(el("h2", null, ["Tasks"]));
    var state = { q: "", status: "", flaky: false, key: "status", dir: 1, page: 0, selected: null };
    var search = el("input", { type: "search", id: "filter", placeholder: "Filter by id, name, tag or feedback", "aria-label": "filter tasks" });
    var select = el("select", { id: "status-filter", "aria-label": "status" }, ["", "passed", "failed", "error", "n/a"].map(function (v) {
      return el("option", { value: v }, [v || "all statuses"]);
    }));
    var flakyBox = el("input", { type: "checkbox", id: "flaky-only" });
    var shown = el("span", { id: "shown", "class": "sub" });
    app.appendChild(el("div", { "class": "controls" }, [search, select, el("label", null, [flakyBox, " flaky only"]), shown]));

    var STATUS_ORDER = { error: 0, failed: 1, "n/a": 2, skipped: 2, passed: 3 };
    var columns = [
      { key: "status", label: "Status", get: function (t) { return STATUS_ORDER[t.status]; } },
      { key: "name", label: "Task", get: function (t) { return (t.name || "").toLowerCase(); } },
      { key: "score", label: "Score", num: true, get: function (t) { return t.score; } },
      { key: "pass_rate", label: "Pass rate", num: true, get: function (t) { return t.pass_rate; } },
      { key: "trials", label: "Trials", get: function (t) { return t.runs.length; } },
      { key: "duration", label: "Avg duration", num: true, get: function (t) { return t.duration_ms; } },
      { key: "tokens", label: "Tokens", num: true, get: function (t) { return t.tokens; } },
      { key: "feedback", label: "Failing graders", get: function (t) { return t.feedback || ""; } }];
    var headRow = el("tr");
    columns.forEach(function (c) {
      var th = el("th", { "class": "sortable" + (c.num ? " num" : ""), "data-key": c.key, scope: "col" }, [c.label]);
      th.addEventListener("click", function () {
        if (state.key === c.key) state.dir = -state.dir; else { state.key = c.key; state.dir = 1; }
        state.page = 0; update();
      });
      headRow.appendChild(th);
    });
    var tbody = el("tbody", { id: "task-rows" });
    app.appendChild(el("table", { id: "tasks" }, [el("thead", null, [headRow]), tbody]));
    var prev = el("button", { type: "button", id: "prev" }, ["‹ previous"]);
    var next = el("button", { type: "button", id: "next" }, ["next ›"]);
    var pageInfo = el("span", { id: "page-info", "class": "sub" });
    app.appendChild(el("div", { "class": "pager" }, [prev, pageInfo, next]));
    var detail = el("section", { id: "detail" });
    app.appendChild(detail);

    var timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = search.value.trim().toLowerCase(); state.page = 0; update(); }, 120);
    });
    select.addEventListener("change", function () { state.status = select.value; state.page = 0; update(); });
    flakyBox.addEventListener("change", function () { state.flaky = flakyBox.checked; state.page = 0; update(); });
    prev.addEventListener("click", function () { if (state.page > 0) { state.page--; update(); } });
    next.addEventListener("click", function () { state.page++; update(); });

    function hay(t) {  // the filter's haystack, built the first time a filter needs it
      if (t._hay === undefined) t._hay = [t.id, t.name, t.status, t.tags.join(" "), t.feedback].join("\n").toLowerCase();
      return t._hay;
    }
    function compare(col) {
      return function (a, b) {
        var x = col.get(a), y = col.get(b);
        var xm = x === null || x === undefined, ym = y === null || y === undefined;
        if (xm || ym) return xm === ym ? a._index - b._index : (xm ? 1 : -1);
        if (x < y) return -state.dir;
        if (x > y) return state.dir;
        return a._index - b._index;
      };
    }
    function update() {
      var rows = tasks.filter(function (t) {
        if (state.status && t.status !== state.status) return false;
        if (state.flaky && !t.flaky) return false;
        return !state.q || hay(t).indexOf(state.q) !== -1;
      });
      var col = columns.filter(function (c) { return c.key === state.key; })[0];
      rows.sort(compare(col));
      Array.prototype.forEach.call(headRow.children, function (th) {
        th.setAttribute("aria-sort", th.getAttribute("data-key") === state.key ? (state.dir > 0 ? "ascending" : "descending") : "none");
      });
      var size = DATA.page_size, pages = Math.max(1, Math.ceil(rows.length / size));
      if (state.page >= pages) state.page = pages - 1;
      var start = state.page * size, pageRows = rows.slice(start, start + size);
      var body = document.createDocumentFragment();
      if (!pageRows.length) body.appendChild(el("tr", null, [el("td", { colspan: columns.length, "class": "empty" }, ["No task matches."])]));
      pageRows.forEach(function (t) {
        var badges = [];
        if (t.flaky) badges.push(el("span", { "class": "badge flaky" }, ["flaky"]));
        if (t.golden) badges.push(el("span", { "class": "badge golden" }, ["golden"]));
        if (t.cached) badges.push(el("span", { "class": "badge cached" }, ["cached"]));
        var tr = el("tr", { "class": "task-row" + (state.selected === t ? " selected" : ""), "data-task-id": t.id, tabindex: 0 }, [
          el("td", { "class": statusClass(t.status) }, [t.status]),
          el("td", null, [t.name, el("span", null, badges), el("div", { "class": "sub" }, [t.id])]),
          el("td", { "class": "num" }, [num(t.score, 2)]),
          el("td", { "class": "num" }, [pct(t.pass_rate)]),
          el("td", null, [spread(t.runs), trialSummary(t.runs)]),
          el("td", { "class": "num" }, [ms(t.duration_ms)]),
          el("td", { "class": "num" }, [isNum(t.tokens) ? String(t.tokens) : "–"]),
          el("td", { "class": "feedback" }, [t.feedback.length > 300 ? t.feedback.slice(0, 300) + "…" : t.feedback])]);
        function open() { state.selected = t; update(); showTask(t); }
        tr.addEventListener("click", open);
        tr.addEventListener("keydown", function (e) { if (e.key === "Enter") open(); });
        body.appendChild(tr);
      });
      tbody.replaceChildren(body);
      shown.textContent = rows.length + " of " + tasks.length + " task(s)";
      pageInfo.textContent = "page " + (state.page + 1) + " of " + pages;
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }

    // A task's runs as the results file has them, from its own JSON element. Before the
    // page has finished loading, the element may not be complete yet: wait for it.
    function loadTask(t, done) {
      if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", function () { loadTask(t, done); }, { once: true });
        return;
      }
      var node = document.getElementById("waza-task-" + t._index);
      done(node ? JSON.parse(node.textContent) : null);
    }
    function showTask(t) {
      detail.replaceChildren(el("h2", null, ["Task: " + t.name]),
        el("p", { "class": "meta" }, ["id " + t.id + " · " + t.status + " · score " + num(t.score, 3) +
          " · pass rate " + pct(t.pass_rate) + (t.tags.length ? " · tags " + t.tags.join(", ") : "")]),
        el("p", { "class": "sub", id: "detail-loading" }, ["loading…"]));
      detail.scrollIntoView({ block: "start" });
      loadTask(t, function (raw) {
        if (state.selected !== t) return;  // another task was opened meanwhile
        detail.removeChild(detail.lastChild);
        var runs = raw && Array.isArray(raw.runs) ? raw.runs.filter(isObj) : [];
        runs.forEach(function (r, k) { detail.appendChild(runCard(r, t.runs[k] || [k + 1, r.status, null, null])); });
        if (!runs.length) detail.appendChild(el("p", { "class": "empty" }, ["No runs recorded."]));
      });
    }
    // r: the run as the results file has it; info: [number, status, score, tokens] from the index
    function runCard(r, info) {
      var box = el("div", { "class": "run" }, [el("h4", null, [
        el("span", { "class": statusClass(info[1]) }, ["Trial " + info[0] + ": " + info[1]]),
        " · score " + num(info[2], 3) + " · " + ms(r.duration_ms) + (isNum(r.attempts) && r.attempts > 1 ? " · " + r.attempts + " attempts" : "") +
        (isNum(info[3]) ? " · " + info[3] + " tokens" : "")])]);
      if (r.error_msg) box.appendChild(longText("pre", { "class": "s-error" }, r.error_msg));
      if (isObj(r.triage)) box.appendChild(el("p", { "class": "triage" }, ["Triage: " + text(r.triage.category) + ": " + text(r.triage.reason)]));
      var vals = isObj(r.validations) ? r.validations : {};
      var names = Object.keys(vals).sort().filter(function (n) { return isObj(vals[n]); });
      if (names.length) {
        var gt = el("table", { "class": "graders" }, [el("thead", null, [el("tr", null, [el("th", null, ["Grader"]),
          el("th", null, ["Type"]), el("th", null, ["Result"]), el("th", { "class": "num" }, ["Score"]), el("th", null, ["Feedback"])])])]);
        var gb = el("tbody");
        names.forEach(function (n) {
          var v = vals[n], passed = v.passed === true;
          gb.appendChild(el("tr", null, [el("td", null, [n]), el("td", null, [text(v.type)]),
            el("td", { "class": statusClass(passed ? "passed" : "failed") }, [passed ? "passed" : "failed"]),
            el("td", { "class": "num" }, [num(v.score, 2)]), el("td", { "class": "feedback" }, [longText("div", null, v.feedback)])]));
        });
        gt.appendChild(gb);
        box.appendChild(gt);
        names.forEach(function (n) {  // a grader that raised keeps its traceback (docs/triage.md)
          var tb = isObj(vals[n].details) ? vals[n].details.traceback : null;
          if (typeof tb === "string" && tb) box.appendChild(el("details", { "class": "traceback" }, [
            el("summary", null, ["Traceback of grader " + n]), longText("pre", null, tb)]));
        });
      }
      box.appendChild(el("h3", null, ["Output"]));
      box.appendChild(r.final_output ? longText("pre", { "class": "output" }, r.final_output) : el("p", { "class": "empty" }, ["(no output)"]));
      box.appendChild(listDetails("Transcript", r.transcript, function (entry) {
        if (isObj(entry) && ("role" in entry || "type" in entry)) {
          var head = [entry.role || entry.type, entry.name || entry.tool_name].filter(Boolean).map(text).join(" · ");
          var rest = {};
          Object.keys(entry).forEach(function (k) { if (k !== "role" && k !== "type") rest[k] = entry[k]; });
          var body = typeof entry.content === "string" && Object.keys(rest).length === 1 ? entry.content : rest;
          return el("div", null, [el("b", null, [head]), longText("pre", null, body)]);
        }
        return longText("pre", null, entry);
      }));
      var events = r.tool_events;
      if ((events === null || events === undefined) && isObj(r.session_digest) && Array.isArray(r.session_digest.tool_calls)) {
        events = r.session_digest.tool_calls;  // older files: the digest's tool calls
      }
      box.appendChild(listDetails("Tool events", events, function (ev) {
        if (!isObj(ev)) return longText("pre", null, ev);
        var head = [text(ev.tool_name || ev.name || "tool"), ev.success === false ? "failed" : (ev.success === true ? "ok" : null),
          isNum(ev.duration_ms) ? ev.duration_ms + " ms" : null].filter(Boolean).join(" · ");
        return el("div", null, [el("b", null, [head]), longText("pre", null, ev)]);
      }));
      return box;
    }
    function listDetails(label, items, render) {
      if (items === null || items === undefined) return el("p", { "class": "sub" }, [label + ": not recorded"]);
      if (!Array.isArray(items)) items = [items];
      if (!items.length) return el("p", { "class": "sub" }, [label + ": none"]);
      var d = el("details", { "class": label.toLowerCase().replace(" ", "-") }, [el("summary", null, [label + " (" + items.length + ")"])]);
      d.addEventListener("toggle", function () {
        if (d.open && d.children.length === 1) items.forEach(function (x) { d.appendChild(render(x)); });
      });
      return d;
    }
    update();
    // When the first page of rows is on screen (the frame after this script), and how many
    // tasks' JSON elements the browser had read by then (none: the rows never wait for
    // them). The benchmark and the browser test read this mark.
    var taskElementsRead = document.querySelectorAll("script[id^='waza-task-']").length;
    if (window.performance && performance.mark) {
      requestAnimationFrame(function () {
        setTimeout(function () { performance.mark("waza:first-rows", { detail: { task_elements_read: taskElementsRead } }); }, 0);
      });
    }
  }

  // -- optimizer reports -----------------------------------------------------------
  function renderOptimizer() {
    var h = DATA.header, cols = DATA.candidates, q = h.qualification || {};
    app.appendChild(el("h1", null, [DATA.title]));
    app.appendChild(el("p", { "class": "meta" }, [["target " + (h.target || "?"), "adapter " + (h.adapter || "?"),
      h.started_at, ms(h.duration_ms), h.waza_version ? "waza " + h.waza_version : null].filter(Boolean).join(" · ")]));
    app.appendChild(el("div", { "class": "cards", id: "summary" }, [
      card("outcome", h.outcome || "?", h.exit_code === 0 ? "verdict-pass" : "verdict-fail"),
      card("stop reason", h.stop_reason || "?"), card("candidates", String(cols.length)),
      card("qualification", (q.status || "?") + (q.decision ? " · " + q.decision : "")),
      card("improvement", num(q.improvement, 3))]));
    if (h.failure) app.appendChild(el("pre", { "class": "s-error" }, [h.failure.category + ": " + h.failure.message]));
    if (q.reason) app.appendChild(el("p", null, ["Qualification: " + q.reason]));

    app.appendChild(el("h2", null, ["Candidates side by side"]));
    function scoreOf(c, split) {
      var evs = c.evaluations.filter(function (e) { return e.split === split && e.state === "scored"; });
      return evs.length ? evs[evs.length - 1] : null;
    }
    var rows = [
      ["role", function (c) { return [c.seed ? "seed" : null, c.best ? "best" : null].filter(Boolean).join(", ") || c.origin; }],
      ["iteration", function (c) { return String(c.iteration); }],
      ["parent", function (c) { return c.parent || "–"; }],
      ["files", function (c) { return c.files.join("\n") + "\n(" + c.bytes + " bytes)"; }],
      ["optimization score", function (c) { var e = scoreOf(c, "optimization"); return e ? num(e.score, 3) + " (pass " + pct(e.pass_rate) + ")" : "–"; }],
      ["qualification score", function (c) { var e = scoreOf(c, "qualification"); return e ? num(e.score, 3) + " (pass " + pct(e.pass_rate) + ")" : "–"; }],
      ["evaluations", function (c) { return c.evaluations.map(function (e) { return "#" + e.index + " " + e.split + " " + e.state + (e.reason ? ": " + e.reason : ""); }).join("\n") || "–"; }]];
    var head = el("tr", null, [el("th", null, [""])].concat(cols.map(function (c) {
      return el("th", { "data-candidate": c.id }, [c.short + (c.best ? " ★" : "")]);
    })));
    var body = el("tbody");
    rows.forEach(function (row) {
      body.appendChild(el("tr", null, [el("th", { scope: "row" }, [row[0]])].concat(cols.map(function (c) {
        return el("td", { "class": "feedback" }, [row[1](c)]);
      }))));
    });
    DATA.task_ids.forEach(function (key) {
      body.appendChild(el("tr", { "class": "task-row" }, [el("th", { scope: "row" }, [key])].concat(cols.map(function (c) {
        var t = c.tasks[key];
        if (!t) return el("td", { "class": "s-na" }, ["–"]);
        return el("td", { "class": statusClass(t.status) }, [t.status + " " + num(t.score, 2) + (t.failed.length ? "\n" + t.failed.join(", ") : "")]);
      }))));
    });
    app.appendChild(el("div", { "class": "side" }, [el("table", { id: "candidates" }, [el("thead", null, [head]), body])]));

    if (DATA.proposals.length) {
      app.appendChild(el("h2", null, ["Proposals"]));
      var pb = el("tbody");
      DATA.proposals.forEach(function (p) {
        pb.appendChild(el("tr", null, [el("td", null, [String(p.iteration)]), el("td", null, [p.result]),
          el("td", null, [p.candidate || "–"]), el("td", { "class": "feedback" }, [p.failure || ""])]));
      });
      app.appendChild(el("table", { id: "proposals" }, [el("thead", null, [el("tr", null, [el("th", null, ["Iteration"]),
        el("th", null, ["Result"]), el("th", null, ["Candidate"]), el("th", null, ["Failure"])])]), pb]));
    }
  }
})();
