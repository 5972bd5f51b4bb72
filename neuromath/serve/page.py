"""The one page of ``neuromath serve`` (``GET /``): pick a run, type a problem, solve it, and see the answer, the n-best
list with each hypothesis's verdict, and the attention map.

Self-contained: the CSS and the script are inline and nothing is loaded from elsewhere (the service sends a
Content-Security-Policy that forbids it). The page calls ``GET /api/runs`` and ``POST /api/solve`` and shows what they
answer; user text is only ever set as ``textContent``, never parsed as HTML.

The attention map is drawn on a ``<canvas>`` from the weights in the JSON answer (one layer and head at a time, picked
with two menus; the weight under the pointer is shown beside it), not rendered to a PNG on the server: the JSON
already holds the weights, drawing them costs the server nothing (``plot_attention`` took 2 s of CPU for the 24
panels of the 2+2-layer word-problem preset, time the model's lock would be held), and the page shows exactly the
numbers the API returns.

Stable element ids, for a browser test: ``run`` (the run menu), ``text`` (the problem), ``solve`` (the button),
``answer``, ``nbest`` (the n-best table), ``attention`` (the attention panel, with ``attention-canvas``), ``error``;
``beam``, ``nbest-size`` and ``show-attention`` are the settings. ``document.body.dataset.state`` is ``loading``,
``ready``, ``solving``, ``solved`` or ``failed``.
"""

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>neuromath</title>
<style>
  :root { --ink: #1d2433; --muted: #5d6678; --line: #d8dde6; --accent: #2456a6; --good: #1f7a3d; --bad: #a12a2a;
          --warn: #8a5a00; --panel: #f6f8fb; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
         background: #fff; }
  main { max-width: 980px; margin: 0 auto; padding: 24px 20px 48px; }
  h1 { font-size: 22px; margin: 0 0 4px; }
  h2 { font-size: 16px; margin: 24px 0 8px; }
  .sub { color: var(--muted); margin: 0 0 20px; }
  label { font-weight: 600; display: block; margin: 12px 0 4px; }
  select, textarea, input[type=number] { font: inherit; color: inherit; border: 1px solid var(--line);
         border-radius: 6px; padding: 6px 8px; background: #fff; }
  #run { min-width: 320px; max-width: 100%; }
  #run-info { color: var(--muted); font-size: 13px; margin-top: 4px; }
  textarea { width: 100%; resize: vertical; min-height: 72px; }
  .options { display: flex; flex-wrap: wrap; gap: 18px; align-items: center; margin: 12px 0; }
  .options label { display: inline; font-weight: normal; margin: 0; }
  .options input[type=number] { width: 72px; margin-left: 6px; }
  button { font: inherit; font-weight: 600; color: #fff; background: var(--accent); border: 0; border-radius: 6px;
           padding: 8px 22px; cursor: pointer; }
  button:disabled { opacity: 0.55; cursor: progress; }
  input:disabled { opacity: 0.45; }
  #error { margin: 16px 0; padding: 10px 12px; border: 1px solid #e3b4b4; background: #fdf1f1; color: var(--bad);
           border-radius: 6px; white-space: pre-wrap; }
  #answer { margin: 16px 0 0; padding: 14px 16px; background: var(--panel); border: 1px solid var(--line);
            border-radius: 8px; font-size: 18px; min-height: 1em; }
  #answer:empty { display: none; }
  #answer .main { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-weight: 600;
                  overflow-wrap: anywhere; }
  #answer .note { display: block; font-size: 13px; color: var(--muted); margin-top: 6px; }
  .badge { display: inline-block; font-size: 12px; font-weight: 600; border-radius: 10px; padding: 1px 9px;
           margin-left: 10px; vertical-align: middle; border: 1px solid currentColor; }
  .good { color: var(--good); } .bad { color: var(--bad); }
  .warn { color: var(--warn); } .plain { color: var(--muted); }
  table { border-collapse: collapse; width: 100%; font-size: 14px; }
  th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { color: var(--muted); font-weight: 600; }
  td.mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; overflow-wrap: anywhere; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
  tr.chosen td { background: #eef4ff; }
  .controls { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; margin-bottom: 8px; }
  .controls select { max-width: 100%; }
  #attention-value { color: var(--muted); font-size: 13px; min-height: 1.4em; }
  .canvas-box { overflow: auto; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
  canvas { display: block; }
  [hidden] { display: none !important; }
</style>
</head>
<body data-state="loading">
<main>
  <h1>neuromath</h1>
  <p class="sub">Solve a problem with a trained run.</p>
  <form id="form" autocomplete="off">
    <label for="run">Run</label>
    <select id="run" name="run"></select>
    <div id="run-info"></div>
    <label for="text">Problem</label>
    <textarea id="text" name="text" rows="4" maxlength="2000" spellcheck="false"></textarea>
    <div class="options">
      <label>Beam <input id="beam" type="number" min="1" max="20" step="1" placeholder="run's"></label>
      <label>N-best <input id="nbest-size" type="number" min="1" max="20" step="1" placeholder="run's"></label>
      <label><input id="show-attention" type="checkbox" checked> attention map</label>
    </div>
    <button id="solve" type="submit">Solve</button>
  </form>
  <div id="error" role="alert" hidden></div>
  <div id="answer" aria-live="polite"></div>
  <section id="nbest-section" hidden>
    <h2>N-best list</h2>
    <table id="nbest">
      <thead><tr><th>#</th><th>answer</th><th>score</th><th>verdict</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section id="attention" hidden>
    <h2>Attention</h2>
    <div class="controls">
      <select id="attention-map" aria-label="layer"></select>
      <select id="attention-head" aria-label="head"></select>
      <span id="attention-value"></span>
    </div>
    <div class="canvas-box"><canvas id="attention-canvas" width="10" height="10"></canvas></div>
  </section>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const EXAMPLES = {
  word_problems: "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",
  word_problems_normalized: "Jerry had 135 pens. John took 19 pens from him. How many pens does Jerry have left?",
  symbolic: "x*cos(x)",
  mathematics_dataset: "What is 2 + 3?",
  identities: "sin(x)^2 + cos(x)^2 = 1",
};
let runs = [];
let maps = [];

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function currentRun() {
  return runs.find((run) => run.name === $("run").value) || null;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = false;
  document.body.dataset.state = "failed";
}

function clearResult() {
  $("error").hidden = true;
  $("error").textContent = "";
  $("answer").replaceChildren();
  $("nbest").tBodies[0].replaceChildren();
  $("nbest-section").hidden = true;
  $("attention").hidden = true;
  maps = [];
}

function describeRun() {
  const run = currentRun();
  if (!run) { $("run-info").textContent = ""; return; }
  const parts = [run.task, run.model];
  if (typeof run.parameters === "number") parts.push(run.parameters.toLocaleString("en") + " parameters");
  if (typeof run.accuracy === "number") {
    parts.push((100 * run.accuracy).toFixed(1) + "% " + (run.accuracy_of || "") + " accuracy");
  }
  if (run.decode) parts.push("beam " + run.decode.beam + ", n-best " + run.decode.nbest);
  $("run-info").textContent = parts.join(" \\u00b7 ");
  $("text").placeholder = EXAMPLES[run.task] || "";
  $("show-attention").disabled = !run.attention;
  $("beam").disabled = $("nbest-size").disabled = !run.decode;
}

async function loadRuns() {
  try {
    const response = await fetch("/api/runs");
    if (!response.ok) throw new Error("HTTP " + response.status);
    runs = await response.json();
  } catch (error) {
    showError("cannot list the runs: " + error.message);
    return;
  }
  for (const run of runs) {
    const option = element("option", run.name + " (" + run.task + ", " + run.model + ")");
    option.value = run.name;
    $("run").append(option);
  }
  describeRun();
  document.body.dataset.state = "ready";
}

function verdictBadge(candidate) {
  // the verifier's verdict by name where the task names it (symbolic: correct, wrong, timeout, ...); else what
  // "verified" means for the run's task: a checked answer, or a well-formed equation (word problems)
  if (candidate.verified === null || candidate.verified === undefined) {
    return candidate.verdict ? element("span", candidate.verdict, "badge plain") : null;
  }
  const form = (currentRun() || {}).verifier === "form";
  if (candidate.verified) {
    return element("span", candidate.verdict || (form ? "well-formed" : "verified"), "badge good");
  }
  const verdict = candidate.verdict || (form ? "not well-formed" : "not verified");
  return element("span", verdict, "badge " + (verdict === "timeout" ? "warn" : "bad"));
}

function shownAnswer(candidate) {
  if (candidate.equation) return candidate.equation + " = " + candidate.answer_text;
  if (candidate.answer_text) return candidate.answer_text;
  return (candidate.tokens || []).join(" ") || "(empty)";
}

function showAnswer(data) {
  const box = $("answer");
  if ("identity" in data) {  // an equation classifier's verdict
    box.append(element("span", data.equation, "main"));
    const kind = data.identity ? "good" : "bad";
    box.append(element("span", data.identity ? "an identity" : "not an identity", "badge " + kind));
    const check = data.numeric_check === null ? "cannot tell" : (data.numeric_check ? "true" : "false");
    const probability = Number(data.probability).toFixed(3);
    box.append(element("span", "probability " + probability + "; numeric check: " + check, "note"));
  } else if (data.reason) {
    box.append(element("span", "no answer", "main"));
    box.append(element("span", data.reason + (data.equation ? " (" + data.equation + ")" : ""), "note"));
  } else {
    box.append(element("span", data.equation ? data.equation + " = " + data.answer_text : data.answer_text, "main"));
    const badge = data.verdict || data.verified !== null ? verdictBadge(data) : null;
    if (badge) box.append(badge);
  }
  if (data.unknown_tokens && data.unknown_tokens.length) {
    const unknown = data.unknown_tokens.join(" ");
    box.append(element("span", "unknown to the run's vocabulary (read as <unk>): " + unknown, "note"));
  }
}

function showNbest(data) {
  const list = data.nbest || [];
  if (!list.length) return;
  const body = $("nbest").tBodies[0];
  const chosen = (data.masked_equation || []).join(" ");
  let marked = false;
  list.forEach((candidate, index) => {
    const row = element("tr");
    if (!marked && candidate.tokens.join(" ") === chosen) { row.className = "chosen"; marked = true; }
    row.append(element("td", index + 1, "num"));
    row.append(element("td", shownAnswer(candidate), "mono"));
    row.append(element("td", candidate.score === null ? "" : Number(candidate.score).toFixed(4), "num"));
    const verdict = element("td");
    const badge = verdictBadge(candidate);
    if (badge) { badge.style.marginLeft = "0"; verdict.append(badge); }
    row.append(verdict);
    body.append(row);
  });
  $("nbest-section").hidden = false;
}

function showAttention(data) {
  maps = data.attention || [];
  if (!maps.length) return;
  const mapMenu = $("attention-map");
  mapMenu.replaceChildren(...maps.map((map, index) => {
    const option = element("option", map.title);
    option.value = String(index);
    return option;
  }));
  $("attention").hidden = false;
  chooseMap();
}

function chooseMap() {
  const map = maps[Number($("attention-map").value) || 0];
  if (!map) return;
  $("attention-head").replaceChildren(...map.heads.map((head, index) => {
    const option = element("option", /^\\d+$/.test(head) ? "head " + head : head);
    option.value = String(index);
    return option;
  }));
  drawAttention();
}

function drawAttention() {
  const map = maps[Number($("attention-map").value) || 0];
  if (!map) return;
  const head = Number($("attention-head").value) || 0;
  const weights = map.weights[head] || [];
  const canvas = $("attention-canvas");
  const context = canvas.getContext("2d");
  const font = "12px ui-monospace, Menlo, Consolas, monospace";
  context.font = font;
  const widest = (tokens) => Math.max(10, ...tokens.map((token) => context.measureText(token).width));
  const cell = Math.max(8, Math.min(28, Math.floor(880 / Math.max(1, map.keys.length))));
  const left = Math.ceil(widest(map.queries)) + 12;
  const bottom = Math.ceil(widest(map.keys)) + 12;
  const width = left + cell * map.keys.length + 8;
  const height = 8 + cell * map.queries.length + bottom;
  const scale = window.devicePixelRatio || 1;
  canvas.width = Math.ceil(width * scale);
  canvas.height = Math.ceil(height * scale);
  canvas.style.width = width + "px";
  canvas.style.height = height + "px";
  context.setTransform(scale, 0, 0, scale, 0, 0);
  context.clearRect(0, 0, width, height);
  context.font = font;
  weights.forEach((row, i) => row.forEach((weight, j) => {
    const w = Math.max(0, Math.min(1, Number(weight) || 0));
    const shade = Math.round(255 * (1 - w));
    const red = Math.round(shade * 0.85 + 8), green = Math.round(shade * 0.9 + 12);
    const blue = Math.round(80 + shade * 0.69);
    context.fillStyle = "rgb(" + red + "," + green + "," + blue + ")";
    context.fillRect(left + j * cell, 8 + i * cell, cell, cell);
  }));
  context.strokeStyle = "#d8dde6";
  context.strokeRect(left - 0.5, 7.5, cell * map.keys.length + 1, cell * map.queries.length + 1);
  context.fillStyle = "#1d2433";
  context.textBaseline = "middle";
  context.textAlign = "right";
  map.queries.forEach((token, i) => context.fillText(token, left - 6, 8 + i * cell + cell / 2));
  map.keys.forEach((token, j) => {
    context.save();
    context.translate(left + j * cell + cell / 2, 8 + cell * map.queries.length + 6);
    context.rotate(-Math.PI / 2);
    context.fillText(token, 0, 0);
    context.restore();
  });
  canvas.dataset.queries = String(map.queries.length);
  canvas.dataset.keys = String(map.keys.length);
  canvas.onmousemove = (event) => {
    const box = canvas.getBoundingClientRect();
    const j = Math.floor((event.clientX - box.left - left) / cell);
    const i = Math.floor((event.clientY - box.top - 8) / cell);
    if (i >= 0 && j >= 0 && i < map.queries.length && j < map.keys.length) {
      const value = Number(weights[i][j]).toFixed(3);
      $("attention-value").textContent = map.queries[i] + " \\u2192 " + map.keys[j] + ": " + value;
    } else {
      $("attention-value").textContent = "";
    }
  };
}

function readSetting(id) {
  const text = $(id).value.trim();
  if (!text || $(id).disabled) return null;
  const value = Number(text);
  if (!Number.isInteger(value)) throw new Error(id.replace("-size", "") + " must be a whole number");
  return value;
}

async function solve(event) {
  event.preventDefault();
  clearResult();
  const run = currentRun();
  if (!run) { showError("no run to solve with"); return; }
  const body = { run: run.name, text: $("text").value, attention: run.attention && $("show-attention").checked };
  try {
    const beam = readSetting("beam");
    const nbest = readSetting("nbest-size");
    if (beam !== null) body.beam = beam;
    if (nbest !== null) body.nbest = nbest;
  } catch (error) {
    showError(error.message);
    return;
  }
  document.body.dataset.state = "solving";
  $("solve").disabled = true;
  try {
    const response = await fetch("/api/solve", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (error) { data = null; }
    if (!response.ok || !data || data.error) {
      showError((data && data.error) || ("the server answered HTTP " + response.status));
      return;
    }
    showAnswer(data);
    showNbest(data);
    showAttention(data);
    document.body.dataset.state = "solved";
  } catch (error) {
    showError("cannot reach the server: " + error.message);
  } finally {
    $("solve").disabled = false;
  }
}

$("form").addEventListener("submit", solve);
$("run").addEventListener("change", () => { clearResult(); describeRun(); });
$("attention-map").addEventListener("change", chooseMap);
$("attention-head").addEventListener("change", drawAttention);
loadRuns();
</script>
</body>
</html>
"""
