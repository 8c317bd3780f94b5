"use strict";
// The waza HTML report. All data comes from the JSON island #waza-data; every piece
// of text reaches the page through textContent (never innerHTML), so agent output is
// shown as text and cannot become markup or script.
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
  function num(v, digits) { return (typeof v === "number" && isFinite(v)) ? v.toFixed(digits) : "–"; }
  function pct(v) { return (typeof v === "number" && isFinite(v)) ? (v * 100).toFixed(1) + "%" : "–"; }
  function ms(v) { return (typeof v === "number" && isFinite(v)) ? Math.round(v) + " ms" : "–"; }
  function statusClass(s) { return "status s-" + (s === "passed" || s === "failed" || s === "error" ? s : "na"); }
  function text(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v, null, 2);
  }
  function card(label, value, cls) { return el("div", { "class": "card" }, [label, el("b", { "class": cls || null }, [value])]); }
  function spread(runs) {
    return el("span", { "class": "spread", "aria-label": "trial spread" }, runs.map(function (r) {
      return el("i", { "class": r.status, title: "trial " + r.number + ": " + r.status + " (score " + num(r.score, 2) + ")" });
    }));
  }

  document.title = DATA.title;
  if (DATA.kind === "optimizer-report") renderOptimizer(); else renderResults();

  function isNum(v) { return typeof v === "number" && isFinite(v); }
  // A run as the results file has it (ours or waza's): derive number, score, tokens, graders.
  function prepareRun(r, k) {
    r.number = isNum(r.run_number) ? r.run_number : k + 1;
    var vals = r.validations && typeof r.validations === "object" ? r.validations : {};
    r.graders = Object.keys(vals).sort().filter(function (n) { return vals[n] && typeof vals[n] === "object"; })
      .map(function (n) { var v = vals[n]; return { name: n, type: v.type, passed: v.passed === true, score: v.score, feedback: v.feedback }; });
    var scores = r.graders.map(function (g) { return g.score; }).filter(isNum);
    r.score = scores.length ? scores.reduce(function (a, b) { return a + b; }, 0) / scores.length : null;
    var u = r.usage || (r.session_digest && r.session_digest.usage), d = r.session_digest || {};
    r.tokens = null;
    if (u && (isNum(u.input_tokens) || isNum(u.output_tokens))) r.tokens = (u.input_tokens || 0) + (u.output_tokens || 0);
    else if (isNum(d.tokens_total)) r.tokens = d.tokens_total;
    else if (isNum(d.tokens_in) || isNum(d.tokens_out)) r.tokens = (d.tokens_in || 0) + (d.tokens_out || 0);
  }

  // -- results files ----------------------------------------------------------------
  function renderResults() {
    var h = DATA.header, s = h.summary || {}, tasks = DATA.tasks;
    tasks.forEach(function (t, i) {
      t._index = i;
      t._hay = [t.id, t.name, t.status, (t.tags || []).join(" "), t.feedback].join("\n").toLowerCase();
      var total = null;
      t.runs.forEach(function (r, k) { prepareRun(r, k); if (r.tokens !== null) total = (total || 0) + r.tokens; });
      t.tokens = total;
    });
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

    var flaky = tasks.filter(function (t) { return t.flaky; });
    if (flaky.length) {
      app.appendChild(el("h2", null, ["Flaky tasks (" + flaky.length + ")"]));
      var ftable = el("table", { id: "flaky" }, [el("thead", null, [el("tr", null, [
        el("th", null, ["Task"]), el("th", { "class": "num" }, ["Pass rate"]), el("th", { "class": "num" }, ["Min score"]),
        el("th", { "class": "num" }, ["Max score"]), el("th", null, ["Trial spread"])])])]);
      var fbody = el("tbody");
      flaky.slice(0, 200).forEach(function (t) {
        var scores = t.runs.map(function (r) { return r.score; }).filter(function (x) { return typeof x === "number"; });
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

    var columns = [
      { key: "status", label: "Status", get: function (t) { return { error: 0, failed: 1, "n/a": 2, skipped: 2, passed: 3 }[t.status]; } },
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
        return !state.q || t._hay.indexOf(state.q) !== -1;
      });
      var col = columns.filter(function (c) { return c.key === state.key; })[0];
      rows.sort(compare(col));
      Array.prototype.forEach.call(headRow.children, function (th) {
        th.setAttribute("aria-sort", th.getAttribute("data-key") === state.key ? (state.dir > 0 ? "ascending" : "descending") : "none");
      });
      var size = DATA.page_size, pages = Math.max(1, Math.ceil(rows.length / size));
      if (state.page >= pages) state.page = pages - 1;
      var start = state.page * size, pageRows = rows.slice(start, start + size);
      while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
      if (!pageRows.length) tbody.appendChild(el("tr", null, [el("td", { colspan: columns.length, "class": "empty" }, ["No task matches."])]));
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
          el("td", null, [spread(t.runs)]),
          el("td", { "class": "num" }, [ms(t.duration_ms)]),
          el("td", { "class": "num" }, [t.tokens === null || t.tokens === undefined ? "–" : String(t.tokens)]),
          el("td", { "class": "feedback" }, [t.feedback.length > 300 ? t.feedback.slice(0, 300) + "…" : t.feedback])]);
        function open() { state.selected = t; update(); showTask(t); }
        tr.addEventListener("click", open);
        tr.addEventListener("keydown", function (e) { if (e.key === "Enter") open(); });
        tbody.appendChild(tr);
      });
      shown.textContent = rows.length + " of " + tasks.length + " task(s)";
      pageInfo.textContent = "page " + (state.page + 1) + " of " + pages;
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }

    function showTask(t) {
      while (detail.firstChild) detail.removeChild(detail.firstChild);
      detail.appendChild(el("h2", null, ["Task: " + t.name]));
      detail.appendChild(el("p", { "class": "meta" }, ["id " + t.id + " · " + t.status + " · score " + num(t.score, 3) +
        " · pass rate " + pct(t.pass_rate) + (t.tags.length ? " · tags " + t.tags.join(", ") : "")]));
      t.runs.forEach(function (r) { detail.appendChild(runCard(r)); });
      if (!t.runs.length) detail.appendChild(el("p", { "class": "empty" }, ["No runs recorded."]));
      detail.scrollIntoView({ block: "start" });
    }
    function runCard(r) {
      var box = el("div", { "class": "run" }, [el("h4", null, [
        el("span", { "class": statusClass(r.status) }, ["Trial " + r.number + ": " + r.status]),
        " · score " + num(r.score, 3) + " · " + ms(r.duration_ms) + (r.attempts > 1 ? " · " + r.attempts + " attempts" : "") +
        (r.tokens !== null && r.tokens !== undefined ? " · " + r.tokens + " tokens" : "")])]);
      if (r.error_msg) box.appendChild(el("pre", { "class": "s-error" }, [r.error_msg]));
      if (r.graders.length) {
        var gt = el("table", { "class": "graders" }, [el("thead", null, [el("tr", null, [el("th", null, ["Grader"]),
          el("th", null, ["Type"]), el("th", null, ["Result"]), el("th", { "class": "num" }, ["Score"]), el("th", null, ["Feedback"])])])]);
        var gb = el("tbody");
        r.graders.forEach(function (v) {
          gb.appendChild(el("tr", null, [el("td", null, [v.name]), el("td", null, [v.type || ""]),
            el("td", { "class": statusClass(v.passed ? "passed" : "failed") }, [v.passed ? "passed" : "failed"]),
            el("td", { "class": "num" }, [num(v.score, 2)]), el("td", { "class": "feedback" }, [text(v.feedback)])]));
        });
        gt.appendChild(gb);
        box.appendChild(gt);
      }
      box.appendChild(el("h3", null, ["Output"]));
      box.appendChild(r.final_output ? el("pre", { "class": "output" }, [r.final_output]) : el("p", { "class": "empty" }, ["(no output)"]));
      box.appendChild(listDetails("Transcript", r.transcript, function (entry) {
        if (entry && typeof entry === "object" && ("role" in entry || "type" in entry)) {
          var head = [entry.role || entry.type, entry.name || entry.tool_name].filter(Boolean).join(" · ");
          var rest = {};
          Object.keys(entry).forEach(function (k) { if (k !== "role" && k !== "type") rest[k] = entry[k]; });
          var body = typeof entry.content === "string" && Object.keys(rest).length === 1 ? entry.content : text(rest);
          return el("div", null, [el("b", null, [head]), el("pre", null, [body])]);
        }
        return el("pre", null, [text(entry)]);
      }));
      box.appendChild(listDetails("Tool events", r.tool_events, function (ev) {
        if (!ev || typeof ev !== "object") return el("pre", null, [text(ev)]);
        var head = [ev.tool_name || ev.name || "tool", ev.success === false ? "failed" : (ev.success === true ? "ok" : null),
          typeof ev.duration_ms === "number" ? ev.duration_ms + " ms" : null].filter(Boolean).join(" · ");
        return el("div", null, [el("b", null, [head]), el("pre", null, [text(ev)])]);
      }));
      return box;
    }
    function listDetails(label, items, render) {
      if (items === null || items === undefined) return el("p", { "class": "sub" }, [label + ": not recorded"]);
      if (!items.length) return el("p", { "class": "sub" }, [label + ": none"]);
      var d = el("details", { "class": label.toLowerCase().replace(" ", "-") }, [el("summary", null, [label + " (" + items.length + ")"])]);
      d.addEventListener("toggle", function () {
        if (d.open && d.children.length === 1) items.forEach(function (x) { d.appendChild(render(x)); });
      });
      return d;
    }
    update();
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
