/* pytest-graphrag-eval HTML report: tabs, question filters, a virtualised question list and the drill-down.
   Every text from the report is inserted as a text node (never as HTML). */
(function () {
  "use strict";
  var ROW_HEIGHT = 52;
  var OVERSCAN = 8;
  var doc = document;
  var root = doc.documentElement;
  root.classList.add("js");

  var index = JSON.parse(doc.getElementById("report-index").textContent);
  var details = null;
  var count = index.id.length;
  /* A question's address is its id, or template/id when another template reuses the id. */
  var positionById = new Map();
  var idCounts = new Map();
  index.id.forEach(function (id) { idCounts.set(id, (idCounts.get(id) || 0) + 1); });
  index.id.forEach(function (id, position) {
    positionById.set(index.templates[index.template[position]] + "/" + id, position);
    if (!positionById.has(id)) positionById.set(id, position);
  });
  function questionHash(position) {
    var id = index.id[position];
    var link = idCounts.get(id) > 1 ? index.templates[index.template[position]] + "/" + id : id;
    return "#q=" + encodeURIComponent(link).replace(/%2F/g, "/");
  }
  var haystack = null;
  var visible = [];
  var selected = -1;

  /* The drill-down data: one JSON document per question and line, gzip-compressed, in base64.
     It is inflated once, on first use; each question is parsed when it is shown. */
  function loadDetails() {
    if (details === null) {
      var binary = atob(doc.getElementById("report-details").textContent.trim());
      var bytes = new Uint8Array(binary.length);
      for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      details = new Response(stream).text().then(function (text) { return text.split("\n"); });
    }
    return details;
  }

  function $(selector) { return doc.querySelector(selector); }

  /* Build an element; strings become text nodes, so report text can never become markup. */
  function el(tag, props) {
    var node = doc.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        var value = props[key];
        if (value === null || value === undefined || value === false) return;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = value;
        else node.setAttribute(key, value === true ? "" : String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (item) { append(node, item); }); return; }
    node.append(child instanceof Node ? child : String(child));
  }

  function fmt(value) {
    if (value === null || value === undefined) return "–";
    if (typeof value !== "number") return String(value);
    if (Number.isInteger(value)) return String(value);
    if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString("en-US");
    return String(Number(value.toPrecision(Math.abs(value) < 1 ? 3 : 4)));
  }

  function pill(kind, label) { return el("span", { class: "pill " + kind }, label || kind); }

  function outcomeLabel(position) {
    var outcome = index.outcomes[index.outcome[position]];
    return outcome === "unknown" ? "answered" : outcome;
  }

  /* Format 1 reports know only agent errors: answered questions get no pill. */
  function outcomePill(position) {
    var label = outcomeLabel(position);
    var agentError = index.agent_error[position] && label !== "error" ? pill("error", "agent error") : null;
    return [label === "answered" ? null : pill(label, label.replace("_", " ")), agentError];
  }

  /* ---------- tabs and routing ---------- */
  var sections = Array.prototype.slice.call(doc.querySelectorAll("main > section.panel"));
  var tabs = Array.prototype.slice.call(doc.querySelectorAll(".tabs a"));

  function show(name) {
    var switching = !sections.some(function (section) { return section.id === name && section.classList.contains("active"); });
    sections.forEach(function (section) { section.classList.toggle("active", section.id === name); });
    if (switching) window.scrollTo(0, 0);
    tabs.forEach(function (tab) {
      if (tab.dataset.tab === name) tab.setAttribute("aria-current", "page");
      else tab.removeAttribute("aria-current");
    });
    if (name === "questions") drawList();
  }

  function route() {
    var hash = decodeURIComponent(location.hash.slice(1));
    if (hash.indexOf("q=") === 0) {
      show("questions");
      var position = positionById.get(hash.slice(2));
      if (position === undefined) showMissing(hash.slice(2));
      else openQuestion(position, true);
      return;
    }
    var known = sections.some(function (section) { return section.id === hash; });
    show(known ? hash : "overview");
  }

  /* ---------- filters ---------- */
  var form = $("#filters");
  var inputs = {
    search: $("#f-search"), template: $("#f-template"), outcome: $("#f-outcome"),
    change: $("#f-change"), flaky: $("#f-flaky"), metric: $("#f-metric"), below: $("#f-below"),
    order: $("#f-order")
  };

  function applyFilters() {
    var query = inputs.search.value.trim().toLowerCase();
    var template = inputs.template.value === "" ? -1 : Number(inputs.template.value);
    var outcome = inputs.outcome.value;
    var change = inputs.change ? inputs.change.value : "";
    var flaky = inputs.flaky.checked;
    var belowText = inputs.below.value.trim();
    var below = belowText === "" ? null : Number(belowText);
    var metricValues = below === null || !inputs.metric.value ? null : index.values[inputs.metric.value];
    if (query && haystack === null) {
      haystack = index.id.map(function (id, position) { return (id + "\n" + index.text[position]).toLowerCase(); });
    }
    var failed = index.outcomes.indexOf("failed");
    var error = index.outcomes.indexOf("error");
    var outcomeCode = index.outcomes.indexOf(outcome);
    var result = [];
    for (var position = 0; position < count; position++) {
      if (template >= 0 && index.template[position] !== template) continue;
      if (outcome === "failing") {
        var code = index.outcome[position];
        if (code !== failed && code !== error) continue;
      } else if (outcome && index.outcome[position] !== outcomeCode) continue;
      if (change && index.change[position] !== change) continue;
      if (flaky && !index.flaky[position]) continue;
      if (metricValues) {
        var value = metricValues[position];
        if (value === null || !(value < below)) continue;
      }
      if (query && haystack[position].indexOf(query) < 0) continue;
      result.push(position);
    }
    if (inputs.order.value === "metric" && inputs.metric.value) result = lowestFirst(result, index.values[inputs.metric.value]);
    visible = result;
    $("#f-count").textContent = result.length === count
      ? count + " questions"
      : result.length + " of " + count + " questions";
    $("#qlist").scrollTop = 0;
    drawList();
  }

  /* Stable sort by the chosen metric, questions without a value last. */
  function lowestFirst(positions, values) {
    return positions.slice().sort(function (a, b) {
      var left = values[a], right = values[b];
      if (left === right) return a - b;
      if (left === null) return 1;
      if (right === null) return -1;
      return left - right;
    });
  }

  var pending = 0;
  function scheduleFilters() {
    clearTimeout(pending);
    pending = setTimeout(applyFilters, 60);
  }

  /* ---------- virtualised question list ---------- */
  var list = $("#qlist");
  var space = $("#qlist-space");
  var frame = 0;

  function drawList() {
    space.style.height = visible.length * ROW_HEIGHT + "px";
    if (!visible.length) {
      space.replaceChildren(el("p", { class: "empty" }, "No question matches these filters."));
      return;
    }
    var top = list.scrollTop;
    var height = list.clientHeight || 600;
    var first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    var last = Math.min(visible.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    var rows = doc.createDocumentFragment();
    for (var slot = first; slot < last; slot++) rows.append(listRow(visible[slot], slot));
    space.replaceChildren(rows);
  }

  function listRow(position, slot) {
    var id = index.id[position];
    var change = index.change[position];
    var values = el("span", { class: "vals" });
    index.metrics.slice(0, 2).forEach(function (metric) {
      var value = index.values[metric][position];
      values.append(el("span", { title: metric },
        metric.replace(/^answer_/, "") + " " + fmt(value)));
    });
    var row = el("a", {
      class: "qrow", href: questionHash(position), role: "option", "data-qid": id,
      "aria-selected": position === selected ? "true" : "false"
    },
      el("span", { class: "l1" },
        outcomePill(position),
        change && change !== "unchanged" ? pill(change) : null,
        index.flaky[position] ? pill("flaky") : null,
        el("span", { class: "qid" }, id),
        values),
      el("span", { class: "l2" }, index.templates[index.template[position]] + " · " + index.text[position]));
    row.style.top = slot * ROW_HEIGHT + "px";
    return row;
  }

  /* ---------- drill-down ---------- */
  var detail = $("#detail");

  function showMissing(id) {
    detail.replaceChildren(el("p", { class: "placeholder" }, "No question with id " + id + " in this report."));
  }

  function openQuestion(position, scrollIntoList) {
    selected = position;
    if (scrollIntoList) {
      var slot = visible.indexOf(position);
      if (slot >= 0) {
        var top = slot * ROW_HEIGHT;
        if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - ROW_HEIGHT) list.scrollTop = top - 2 * ROW_HEIGHT;
      }
    }
    drawList();
    loadDetails().then(function (all) {
      if (selected !== position) return;
      detail.replaceChildren(renderDetail(position, JSON.parse(all[position])));
      detail.scrollTop = 0;
      if (window.matchMedia("(max-width: 900px)").matches) detail.scrollIntoView();
    }, function (error) {
      detail.replaceChildren(el("p", { class: "placeholder" }, "This browser could not read the question details: " + error));
    });
  }

  function renderDetail(position, data) {
    var id = index.id[position];
    var change = data.change ? data.change.classification : null;
    var parts = [
      el("h2", null, id, outcomePill(position),
        change && change !== "unchanged" ? pill(change) : null, index.flaky[position] ? pill("flaky") : null),
      el("div", { class: "muted" }, "template ", el("code", null, data.template_id)),
      el("p", { class: "qtext" }, data.question_text)
    ];
    if (data.status !== "success") {
      parts.push(el("h3", null, "Agent error"), el("div", { class: "errorbox" }, data.error || "no error message"));
    }
    /* Threshold failures are in the thresholds table; other failures (an agent error) are listed. */
    var thresholdMessages = data.thresholds.map(function (item) { return item.message; });
    var failures = data.failures.filter(function (text) { return thresholdMessages.indexOf(text) < 0; });
    if (failures.length && data.status === "success") {
      parts.push(el("h3", null, "Why it failed"),
        el("ul", { class: "reasons" }, failures.map(function (text) { return el("li", null, text); })));
    }
    if (data.thresholds && data.thresholds.length) parts.push(el("h3", null, "Thresholds"), thresholdTable(data.thresholds));
    parts.push(scoreSection(data));
    if (data.status === "success" || data.actual_answer) {
      parts.push(el("h3", null, "Answer"), el("div", { class: "answers", "data-testid": "answers" },
        el("div", { class: "answer" }, el("span", { class: "label" }, "Reference"), data.reference_answer || "–"),
        el("div", { class: "answer" }, el("span", { class: "label" }, "Actual"), data.actual_answer || "–")));
    }
    if (data.reasons.length || data.metric_errors.length) {
      parts.push(el("h3", null, "Judge" + (data.judge ? " (" + data.judge + ")" : "")),
        el("ul", { class: "reasons" },
          data.reasons.map(function (pair) { return el("li", null, el("code", null, pair[0]), pair[1]); }),
          data.metric_errors.map(function (pair) {
            return el("li", null, el("code", null, pair[0]), el("span", { class: "warn-text" }, pair[1]));
          })));
    }
    if (data.steps) parts.push(stepSection(data.steps));
    if (data.change) parts.push(changeSection(data.change));
    if (data.attempts && data.attempts.length) parts.push(attemptSection(data.attempts));
    if (data.history && data.history.length) parts.push(historySection(data.history, data.history_flaky));
    return el("div", { "data-question": id }, parts);
  }

  function thresholdTable(thresholds) {
    return el("table", { "data-testid": "thresholds" },
      el("thead", null, el("tr", null, el("th", null, "Threshold"), el("th", { class: "num" }, "Value"),
        el("th", null, "Result"), el("th", null, "Source"))),
      el("tbody", null, thresholds.map(function (item) {
        return el("tr", { class: item.passed ? null : "row-bad" },
          el("td", null, el("code", null, item.expression || item.metric + item.op + fmt(item.limit))),
          el("td", { class: "num" }, fmt(item.actual)),
          el("td", null, pill(item.passed ? "passed" : "failed")),
          el("td", { class: "muted" }, item.source));
      })));
  }

  function scoreSection(data) {
    var scores = data.scores.filter(function (pair) { return pair[1] !== null; });
    var values = data.values.filter(function (pair) { return pair[1] !== null; });
    if (!scores.length && !values.length) return null;
    /* A score is green or red only when a threshold on it judged it; otherwise it stays neutral. */
    var verdicts = {};
    data.thresholds.forEach(function (item) {
      verdicts[item.metric] = verdicts[item.metric] === "fail" || !item.passed ? "fail" : "pass";
    });
    return el("div", null, el("h3", null, "Scores"),
      el("div", { class: "score-grid", "data-testid": "scores" }, scores.map(function (pair) {
        var tone = verdicts[pair[0]] || "";
        return el("div", { "data-verdict": tone || null }, el("span", { class: "name", title: pair[0] }, pair[0]),
          scoreBar(pair[1], tone), el("span", { class: "value" + (tone ? " " + tone : "") }, fmt(pair[1])));
      })),
      values.length ? el("p", { class: "usage-line" }, values.map(function (pair) {
        return el("span", null, el("code", null, pair[0]), " " + fmt(pair[1]));
      })) : null);
  }

  var SVG = "http://www.w3.org/2000/svg";
  function scoreBar(value, tone) {
    var svg = doc.createElementNS(SVG, "svg");
    svg.setAttribute("class", "sbar");
    svg.setAttribute("viewBox", "0 0 100 8");
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("aria-hidden", "true");
    [["track", 100], [tone ? "fill " + tone : "fill", Math.max(0, Math.min(1, value)) * 100]]
      .forEach(function (spec) {
        var rect = doc.createElementNS(SVG, "rect");
        rect.setAttribute("class", spec[0]);
        rect.setAttribute("width", String(spec[1]));
        rect.setAttribute("height", "8");
        rect.setAttribute("rx", "2");
        svg.append(rect);
      });
    return svg;
  }

  function stepSection(steps) {
    var body = el("tbody");
    steps.reference.forEach(function (step) {
      var state = step.matches !== null ? "matched" : step.scored ? "unmatched" : "unscored";
      body.append(el("tr", { class: state },
        el("td", { class: "mono" }, step.label),
        el("td", null, step.name),
        el("td", null, argsView(step.args)),
        el("td", null, matchCell(step, steps.scope))));
      if (step.mismatch) {
        body.append(el("tr", { class: "diffrow" }, el("td", { colspan: 4 }, mismatchView(step.mismatch))));
      }
    });
    var actual = el("tbody", null, steps.actual.map(function (step) {
      return el("tr", { class: step.matched_by ? "matched" : null },
        el("td", null, el("div", null, step.name), el("div", { class: "sid" }, step.id || "no id")),
        el("td", null, step.status === "success" ? step.status : pill("error", step.status)),
        el("td", null, step.matched_by ? el("code", null, step.matched_by) : el("span", { class: "muted" }, "–")),
        el("td", { class: "wide" }, argsView(step.args),
          step.output ? el("details", null, el("summary", null, "output"), el("pre", null, step.output)) : null));
    }));
    return el("div", { "data-testid": "steps" },
      el("h3", null, "Reference steps"),
      el("div", { class: "table-wrap" }, el("table", { class: "steps", "data-testid": "reference-steps" },
        headRow(["Step", "Name", "Arguments", "Matched actual step"]),
        body)),
      el("h3", null, "Actual steps"),
      steps.actual.length
        ? el("div", { class: "table-wrap" }, el("table", { class: "steps", "data-testid": "actual-steps" },
          headRow(["Step", "Status", "Matches reference", "Arguments and output"]),
          actual))
        : el("p", { class: "muted" }, "The agent reported no steps."));
  }

  function matchCell(step, scope) {
    if (step.matches !== null) return [pill("matched"), " ", el("code", null, step.matches)];
    if (step.scored) return pill("unmatched", "not matched");
    return el("span", { class: "muted" }, "not scored (" + scope + ")");
  }

  function headRow(labels) {
    return el("thead", null, el("tr", null, labels.map(function (label) {
      return Array.isArray(label) ? el("th", { class: label[1] }, label[0]) : el("th", null, label);
    })));
  }

  function argsView(args) {
    if (!args.length) return el("span", { class: "muted" }, "–");
    return args.map(function (pair) {
      var long = pair[1].length > 60 || pair[1].indexOf("\n") >= 0;
      return long
        ? el("details", null, el("summary", null, pair[0]), el("pre", null, pair[1]))
        : el("div", null, el("span", { class: "muted" }, pair[0] + ": "), el("code", null, pair[1]));
    });
  }

  function mismatchView(mismatch) {
    if (mismatch.lines) {
      return el("div", { class: "diff" }, mismatch.lines.map(function (line) { return el("div", null, line); }));
    }
    var parts = [el("div", { class: "why" }, mismatch.reason)];
    if (mismatch.closest) {
      parts.push(el("div", { class: "muted" }, "closest actual step: ", el("code", null, mismatch.closest)));
    }
    var mapping = mismatch.column_mapping || {};
    var pairs = Object.keys(mapping).map(function (key) { return key + " → " + mapping[key]; });
    if (pairs.length) parts.push(el("div", { class: "muted" }, "column mapping: ", el("code", null, pairs.join(", "))));
    if (mismatch.unmapped_columns && mismatch.unmapped_columns.length) {
      parts.push(el("div", { class: "muted" }, "required columns with no partner: ",
        el("code", null, mismatch.unmapped_columns.join(", "))));
    }
    if (mismatch.reference_row_count !== undefined) {
      parts.push(el("div", { class: "muted" },
        "rows: reference " + mismatch.reference_row_count + ", actual " + mismatch.actual_row_count +
        (mismatch.mode ? " · compared " + mismatch.mode : "")));
    }
    if (mismatch.reference_boolean !== undefined) {
      parts.push(el("div", null, "ASK: reference " + mismatch.reference_boolean + ", actual " + mismatch.actual_boolean));
    }
    parts.push(rowTable("missing", "Missing rows (in the reference, not in the actual result)",
      mismatch.missing_rows, mismatch.missing_rows_total));
    parts.push(rowTable("extra", "Extra rows (in the actual result, not in the reference)",
      mismatch.extra_rows, mismatch.extra_rows_total));
    var firstDiffering = mismatch.first_differing_row;
    if (firstDiffering !== undefined && firstDiffering !== null) {
      parts.push(el("div", null,
        "Same rows in another order; the first differing row is row " + (firstDiffering + 1) + "."));
    }
    if (mismatch.reference_table || mismatch.actual_table) {
      parts.push(el("div", { class: "side-by-side" },
        resultTable("Reference result", mismatch.reference_table, mismatch.required_columns, firstDiffering),
        resultTable("Closest actual result", mismatch.actual_table, Object.values(mapping), firstDiffering)));
    }
    return el("div", { class: "diff", "data-testid": "row-diff" }, parts);
  }

  function rowTable(kind, title, rows, total) {
    if (!rows || !rows.length) return null;
    var columns = [];
    rows.forEach(function (row) {
      Object.keys(row).forEach(function (key) { if (columns.indexOf(key) < 0) columns.push(key); });
    });
    var more = total > rows.length ? " — showing " + rows.length + " of " + total : "";
    return el("table", { "data-testid": kind + "-rows" },
      el("caption", { class: kind }, title + " (" + total + ")" + more),
      headRow(columns),
      el("tbody", null, rows.map(function (row) {
        return el("tr", { class: kind }, columns.map(function (column) {
          return el("td", null, row[column] === undefined ? "" : row[column]);
        }));
      })));
  }

  function resultTable(title, table, highlighted, differingRow) {
    if (!table) return null;
    var shown = table.rows.length < table.total
      ? " — first " + table.rows.length + " of " + table.total + " rows"
      : " (" + table.total + (table.total === 1 ? " row)" : " rows)");
    return el("table", { class: "result" },
      el("caption", null, title + shown),
      el("thead", null, el("tr", null, table.columns.map(function (column) {
        return el("th", { class: (highlighted || []).indexOf(column) >= 0 ? "key" : null }, column);
      }))),
      el("tbody", null, table.rows.map(function (row, number) {
        return el("tr", { class: number === differingRow ? "differs" : null }, row.map(function (cell) {
          return el("td", null, cell === null ? "" : String(cell));
        }));
      })));
  }

  function changeSection(change) {
    return el("div", null, el("h3", null, "Since baseline"),
      el("p", null, pill(change.classification), " baseline ", el("b", null, change.baseline_outcome || "–"),
        " → now ", el("b", null, change.current_outcome || "–")),
      change.deltas.length ? el("table", { "data-testid": "question-deltas" },
        headRow(["Metric", ["Baseline", "num"], ["Current", "num"], ["Δ", "num"]]),
        el("tbody", null, change.deltas.map(function (row) {
          var direction = row[3] > 0 ? "up" : row[3] < 0 ? "down" : "";
          return el("tr", null, el("td", null, el("code", null, row[0])), el("td", { class: "num" }, fmt(row[1])),
            el("td", { class: "num" }, fmt(row[2])),
            el("td", { class: "num delta " + direction }, (row[3] > 0 ? "+" : "") + fmt(row[3])));
        }))) : null);
  }

  /* The question's outcome in each of the last runs, oldest first, this run last. */
  function historySection(outcomes, flaky) {
    return el("div", null, el("h3", null, "Last runs" + (flaky ? " (flaky)" : "")),
      el("div", { class: "history-strip", "data-testid": "history-strip", "data-outcomes": outcomes.join(" ") },
        outcomes.map(function (outcome, number) {
          return el("span", { class: "h-" + outcome, title: "run " + (number + 1) + ": " + outcome });
        })),
      el("span", { class: "muted" }, " oldest first, this run last"));
  }

  function attemptSection(attempts) {
    return el("div", null, el("h3", null, "Attempts"),
      el("table", null, el("tbody", null, attempts.map(function (attempt, number) {
        return el("tr", null, el("td", null, "#" + (number + 1)), el("td", null, pill(attempt.outcome)),
          el("td", null, attempt.scores.map(function (pair) { return pair[0] + " " + fmt(pair[1]) + "  "; })));
      }))));
  }

  /* ---------- wiring ---------- */
  function wire() {
    form.addEventListener("input", scheduleFilters);
    form.addEventListener("change", scheduleFilters);
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.addEventListener("reset", function () { setTimeout(applyFilters, 0); });
    list.addEventListener("scroll", function () {
      if (frame) return;
      frame = requestAnimationFrame(function () { frame = 0; drawList(); });
    });
    list.addEventListener("keydown", function (event) {
      if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
      event.preventDefault();
      var slot = visible.indexOf(selected) + (event.key === "ArrowDown" ? 1 : -1);
      if (slot < 0 || slot >= visible.length) return;
      selected = visible[slot];  // at once, so a key pressed before the hash change lands moves on from here
      location.hash = questionHash(selected);
    });
    doc.querySelectorAll("[data-filter-template]").forEach(function (link) {
      link.addEventListener("click", function () {
        form.reset();
        inputs.template.value = link.dataset.filterTemplate;
        applyFilters();
      });
    });
    doc.querySelectorAll("[data-filter-change]").forEach(function (link) {
      link.addEventListener("click", function () {
        form.reset();
        if (inputs.change) inputs.change.value = link.dataset.filterChange;
        applyFilters();
      });
    });
    var histTemplate = $("#hist-template");
    histTemplate.addEventListener("change", function () {
      doc.querySelectorAll(".hist[data-template]").forEach(function (chart) {
        chart.hidden = chart.dataset.template !== histTemplate.value;
      });
    });
    var deltaMetric = $("#delta-metric");
    if (deltaMetric) {
      deltaMetric.addEventListener("change", function () {
        doc.querySelectorAll(".delta-metric").forEach(function (block) {
          block.hidden = block.dataset.metric !== deltaMetric.value;
        });
      });
    }
    window.addEventListener("hashchange", route);
  }

  wire();
  applyFilters();
  route();
  root.dataset.ready = "true";
  window.graphragReportReadyMs = performance.now();
})();

/* The review view: the verdicts a reviewer marks become a reviews file to download (review.py).
   Answers arrive as base64 JSON and are inserted as text nodes; every text is written to the file as a
   JSON-quoted YAML scalar, so no answer can break the file. */
(function () {
  "use strict";
  var doc = document;
  var section = doc.getElementById("review");
  var button = doc.getElementById("rv-download");
  if (!section || !button) return;
  var bytes = Uint8Array.from(atob(section.dataset.review), function (c) { return c.charCodeAt(0); });
  var review = JSON.parse(new TextDecoder().decode(bytes));
  var status = doc.getElementById("rv-status");

  function node(tag, attributes, children) {
    var element = doc.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) { element.setAttribute(name, attributes[name]); });
    (children || []).forEach(function (child) {
      element.appendChild(typeof child === "string" ? doc.createTextNode(child) : child);
    });
    return element;
  }
  function choice(index, value, label, testid, checked) {
    var input = node("input", { type: "radio", name: "rv-" + index, value: value });
    if (testid) input.setAttribute("data-testid", testid);
    input.checked = checked;
    return node("label", null, [input, " " + label]);
  }
  var list = doc.getElementById("rv-items");
  review.items.forEach(function (item, index) {
    var verdict = node("fieldset", { class: "review-verdict" }, [
      node("legend", { class: "visually-hidden" }, ["Verdict on " + item.question_id]),
      choice(index, "", "not reviewed", null, true),
      choice(index, "pass", "pass", "mark-pass", false),
      choice(index, "fail", "fail", "mark-fail", false),
      node("input", { type: "text", class: "rv-reason", "data-testid": "review-reason", placeholder: "why (kept in the file)", "aria-label": "Reason" })
    ]);
    if (item.answer === null) verdict.disabled = true;
    list.appendChild(node("li", { class: "review-item", "data-index": String(index), "data-testid": "review-item", "data-question": item.question_id }, [
      node("p", null, [node("code", null, [item.question_id]), " ", node("span", { class: "muted" }, [item.template_id]), " ", node("span", { class: "pill " + item.outcome }, [item.outcome])]),
      node("p", null, [item.question_text]),
      node("blockquote", { class: "review-answer" }, [item.answer === null ? "(no answer)" : item.answer]),
      node("ul", null, item.reasons.map(function (reason) { return node("li", null, [reason]); })),
      verdict
    ]));
  });

  /* YAML reads a JSON string as a double-quoted scalar; characters it will not take raw are escaped. */
  function quoted(text) {
    return JSON.stringify(String(text)).replace(/[\u007f-\u009f\u2028\u2029\ufeff]/g, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
  }
  function entry(item) {
    return "- question_id: " + quoted(item.question_id) + "\n" +
      "  answer: " + quoted(item.answer) + "\n" +
      "  fingerprint: " + quoted(item.fingerprint) + "\n" +
      "  verdict: " + (item.verdict === "pass" ? "pass" : "fail") + "\n" +
      "  by: " + quoted(item.by) + "\n" +
      "  date: " + quoted(item.date) + "\n" +
      "  reason: " + quoted(item.reason || "") + "\n";
  }
  button.addEventListener("click", function () {
    var name = doc.getElementById("rv-name").value.trim();
    if (!name) { status.textContent = "Give your name first: a review says who decided."; return; }
    var today = new Date().toISOString().slice(0, 10);
    var marked = [];
    doc.querySelectorAll(".review-item").forEach(function (row) {
      var checked = row.querySelector("input[type=radio]:checked");
      if (!checked || !checked.value) return;
      var item = review.items[Number(row.dataset.index)];
      if (item.answer === null) return;
      marked.push({
        question_id: item.question_id, answer: item.answer, fingerprint: item.fingerprint,
        verdict: checked.value, by: name, date: today, reason: row.querySelector(".rv-reason").value.trim()
      });
    });
    /* A new verdict on an answer replaces an earlier review of that same answer. */
    var marks = new Set(marked.map(function (item) { return item.question_id + "\n" + item.fingerprint; }));
    var kept = review.existing.filter(function (item) { return !marks.has(item.question_id + "\n" + item.fingerprint); });
    var all = kept.concat(marked);
    var text = all.length
      ? "# Each review decides its question while the agent gives this exact answer.\nreviews:\n" + all.map(entry).join("")
      : "reviews: []\n";
    var link = doc.createElement("a");
    link.href = "data:application/yaml;charset=utf-8," + encodeURIComponent(text);
    link.download = "reviews.yaml";
    doc.body.appendChild(link);
    link.click();
    link.remove();
    status.textContent = marked.length + " new verdict(s) and " + kept.length + " earlier review(s) in reviews.yaml";
  });
})();
