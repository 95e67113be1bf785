// instancetype-webhook playground. Plain JavaScript, no libraries: every value that comes from the VM
// is put on the page with textContent (never as markup). The whole state lives in the URL fragment.
"use strict";

const $ = (id) => document.getElementById(id);
const API = "/playground/api/";
const FIELDS = ["policy", "instancetype", "preference", "resize-instancetype", "resize-preference", "compare-release"];
const ORIGINS = { server: "the server's policy", namespace: "the namespace's label", annotation: "the VM's annotation" };
let timer = null;
let serial = 0;
let tab = "diff";
let marked = new Map(); // line -> class ("cause" or "error")
let underlines = new Map(); // line -> [[column, length], ...]: the keys of unknown fields (strict field validation)

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

// ---- the editor: a textarea over a backdrop that highlights lines ----------------------------------
function paintEditor() {
  const lines = $("text").value.split("\n");
  const back = document.createDocumentFragment();
  const gutter = document.createDocumentFragment();
  lines.forEach((line, i) => {
    const mark = marked.get(i + 1) || "";
    back.appendChild(underlines.has(i + 1) ? underlined(line, underlines.get(i + 1), mark)
      : el("div", line === "" ? " " : line, mark));
    gutter.appendChild(el("div", i + 1, mark));
  });
  // room for the textarea's scroll bar: the backdrop and the gutter must scroll as far as the textarea
  back.appendChild(el("div", " ", "spacer"));
  gutter.appendChild(el("div", "", "spacer"));
  $("backdrop").replaceChildren(back);
  $("gutter").replaceChildren(gutter);
  syncScroll();
}

// a backdrop line whose unknown-field keys (1-based column, length) are underlined
function underlined(line, spans, mark) {
  const div = el("div", null, mark);
  let at = 0;
  for (const [column, length] of [...spans].sort((a, b) => a[0] - b[0])) {
    const start = Math.max(column - 1, at);
    div.appendChild(document.createTextNode(line.slice(at, start)));
    div.appendChild(el("span", line.slice(start, start + length), "unknown"));
    at = start + length;
  }
  div.appendChild(document.createTextNode(line.slice(at) || (line === "" ? " " : "")));
  return div;
}

function syncScroll() {
  const text = $("text");
  $("backdrop").scrollTop = text.scrollTop;
  $("backdrop").scrollLeft = text.scrollLeft;
  $("gutter").scrollTop = text.scrollTop;
}

function goToLine(line, column) {
  const text = $("text");
  const lines = text.value.split("\n");
  let start = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) start += lines[i].length + 1;
  const end = start + (lines[line - 1] || "").length;
  text.focus();
  text.setSelectionRange(start + Math.max((column || 1) - 1, 0), end);
  const height = parseFloat(getComputedStyle(text).lineHeight) || 18;
  text.scrollTop = Math.max(0, (line - 4) * height);
  syncScroll();
}

// ---- state <-> URL fragment (deflate-raw, base64url) -------------------------------------------------
function state() {
  const s = { text: $("text").value, tab };
  for (const f of FIELDS) s[f] = $(f).value;
  return s;
}

async function encode(s) {
  const bytes = new TextEncoder().encode(JSON.stringify(s));
  const packed = await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate-raw"))).arrayBuffer();
  let bin = "";
  new Uint8Array(packed).forEach((b) => { bin += String.fromCharCode(b); });
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function decode(fragment) {
  const b64 = fragment.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "===".slice((b64.length + 3) % 4));
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"))).text();
  return JSON.parse(text);
}

async function saveState() {
  const fragment = "#z=" + (await encode(state()));
  history.replaceState(null, "", fragment);
}

async function restoreState() {
  const hash = location.hash;
  if (!hash.startsWith("#z=")) return false;
  try {
    const s = await decode(hash.slice(3));
    $("text").value = typeof s.text === "string" ? s.text : "";
    for (const f of FIELDS) $(f).value = typeof s[f] === "string" ? s[f] : "";
    if (typeof s.tab === "string") showTab(s.tab);
    return true;
  } catch (err) {
    showError("the link's state could not be read: " + err);
    return false;
  }
}

// ---- talking to the server ----------------------------------------------------------------------------
async function getJSON(path) {
  const answer = await fetch(API + path, { headers: { Accept: "application/json" } });
  return answer.json();
}

function schedule(delay) {
  clearTimeout(timer);
  timer = setTimeout(runNow, delay);
}

async function runNow() {
  clearTimeout(timer);
  const mine = ++serial;
  const s = state();
  const body = {
    text: s.text, policy: s.policy, instancetype: s.instancetype, preference: s.preference,
    resize_instancetype: s["resize-instancetype"], resize_preference: s["resize-preference"],
    compare_release: s["compare-release"] || "",
  };
  document.body.classList.add("busy");
  let result;
  try {
    const answer = await fetch(API + "run", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    result = await answer.json();
  } catch (err) {
    result = { ok: false, error: "the server did not answer: " + err };
  }
  if (mine !== serial) return; // a newer run is on its way
  render(result);
  await saveState();
  document.body.classList.remove("busy");
  document.body.dataset.runs = String(mine); // how many answers the page has shown
}

// ---- rendering ---------------------------------------------------------------------------------------
function showError(message) {
  const v = $("verdict");
  v.className = "verdict error";
  v.replaceChildren(el("strong", "Cannot run"), el("span", message));
}

function clearResults(note) {
  $("causes").replaceChildren();
  $("warnings").replaceChildren();
  $("diff").replaceChildren();
  $("patch").replaceChildren();
  $("domain").textContent = "";
  $("resize-diff").replaceChildren();
  $("resize-warnings").replaceChildren();
  for (const id of ["diff-note", "patch-note", "domain-note", "resize-note"]) $(id).textContent = note || "";
  $("stored-head").textContent = "VM as stored";
}

function renderWhatIf(r) {
  // the what-if: what the second release answers otherwise (admission.whatif's text form)
  const box = $("whatif");
  box.hidden = !(r.ok && r.whatIf);
  box.textContent = r.ok && r.whatIf ? r.whatIf.text : "";
}

function render(r) {
  marked = new Map();
  underlines = new Map();
  renderWhatIf(r);
  document.body.classList.toggle("refused", !(r.ok && r.allowed));
  if (!r.ok) {
    clearResults("");
    showError(r.error || "unknown error");
    if (r.yamlError && r.yamlError.line) marked.set(r.yamlError.line, "error");
    paintEditor();
    return;
  }
  clearResults(r.allowed ? "" : "Refused: the VM is not stored, so there is nothing to show here.");
  renderVerdict(r);
  renderWarnings($("warnings"), r.warnings || []);
  renderUnknownFields(r.unknownFields || []);
  if (!r.allowed) {
    $("diff-note").textContent = "Refused: the VM is not stored. This is the VM as it was sent.";
    $("stored-head").textContent = "not stored";
    const sent = r.sentYAML.replace(/\n$/, "").split("\n");
    renderDiff($("diff"), r.sentYAML, "", sent.map((_, i) => ({ left: i + 1, right: null, change: "same" })));
    renderCauses(r.causes || []);
    renderPatch(r);
    paintEditor();
    return;
  }
  paintEditor();
  renderDiff($("diff"), r.sentYAML, r.storedYAML, r.diff);
  const [removed, added] = r.changedLines;
  $("diff-note").textContent = r.flat
    ? `Stored flat under ${r.policy}: ${removed} line(s) of the VM as sent changed, ${added} line(s) of the stored VM are new or changed.`
    : (added || removed)
      ? `Stored with its references under ${r.policy}: ${added} line(s) changed.`
      : `Stored as sent under ${r.policy}: the VM keeps its references and virt-controller applies them when it starts.`;
  $("stored-head").textContent = r.flat ? "VM as stored (flat)" : "VM as stored";
  renderPatch(r);
  renderDomain(r);
  renderResize(r);
}

function renderVerdict(r) {
  const v = $("verdict");
  const origin = ORIGINS[r.policyOrigin] || r.policyOrigin;
  const policy = `policy ${r.policy} (${origin}), ${r.operation} in namespace ${r.namespace}`;
  if (r.allowed) {
    v.className = "verdict allowed";
    const ops = (r.patch || []).length;
    v.replaceChildren(el("strong", ops ? `Allowed, patched: ${ops} JSONPatch operation(s)` : "Allowed, unchanged"),
      el("span", policy));
    return;
  }
  const status = r.status || {};
  const who = r.deniedBy === "mutate" ? "the mutating webhook (/mutate)" : "the validating webhook (/validate)";
  v.className = "verdict denied";
  v.replaceChildren(el("strong", `Refused by ${who}: HTTP ${status.code || ""}`), el("div", status.message || ""),
    el("span", policy));
}

function renderCauses(causes) {
  const list = $("causes");
  list.replaceChildren();
  for (const c of causes) {
    const li = el("li", null, "cause");
    const path = el("button", c.field || "(no field)", "cause-path");
    path.type = "button";
    if (c.line) {
      marked.set(c.line, "cause");
      path.addEventListener("click", () => goToLine(c.line, c.column));
    }
    li.appendChild(path);
    li.appendChild(el("span", " " + (c.message || "") + (c.reason ? ` [${c.reason}]` : "")));
    if (c.line) li.appendChild(el("div", c.exact ? `line ${c.line}` : `not written in the text; nearest: line ${c.line}`, "where"));
    list.appendChild(li);
  }
}

function renderWarnings(list, warnings) {
  list.replaceChildren(...warnings.map((w) => el("li", w, "warning")));
}

// kubectl's strict field validation warnings, each a button to its field, whose key is underlined in the editor
function renderUnknownFields(fields) {
  for (const f of fields) {
    const li = el("li", null, "warning unknown-field");
    const path = el("button", f.message, "cause-path");
    path.type = "button";
    if (f.line) {
      underlines.set(f.line, [...(underlines.get(f.line) || []), [f.column, f.length]]);
      path.addEventListener("click", () => goToLine(f.line, f.column));
    }
    li.appendChild(path);
    li.appendChild(el("span", " not in this KubeVirt release's schema: the API server drops it with this warning, or refuses the VM under strict field validation (kubectl's default)"));
    $("warnings").appendChild(li);
  }
}

function renderDiff(box, leftText, rightText, rows) {
  const left = leftText.replace(/\n$/, "").split("\n");
  const right = rightText.replace(/\n$/, "").split("\n");
  const frag = document.createDocumentFragment();
  for (const row of rows) {
    const l = row.left !== null, r = row.right !== null;
    frag.appendChild(el("span", l ? row.left : "", "n"));
    const leftText = frag.appendChild(el("span", l ? left[row.left - 1] : "", l ? `${row.change} l` : "blank"));
    frag.appendChild(el("span", r ? row.right : "", "n"));
    const rightText = frag.appendChild(el("span", r ? right[row.right - 1] : "", r ? `${row.change} r` : "blank"));
    if (l) leftText.dataset.sent = String(row.left);
    if (r) rightText.dataset.stored = String(row.right);
  }
  box.replaceChildren(frag);
}

function renderPatch(r) {
  const list = $("patch");
  list.replaceChildren();
  const ops = r.patch || [];
  $("patch-note").textContent = !r.allowed && r.deniedBy === "mutate" ? "Refused: no patch."
    : ops.length ? `${ops.length} operation(s), as /mutate answers them (RFC 6902, decoded from base64).`
      : "No patch: the VM is stored as sent.";
  const lines = r.patchLines || [];
  ops.forEach((op, i) => {
    const li = el("li");
    const at = lines[i];
    if (at) {
      const jump = li.appendChild(el("button", `${at.side} line ${at.line}`, "jump"));
      jump.type = "button";
      jump.addEventListener("click", () => showDiffLine(at.side, at.line));
    }
    li.appendChild(el("span", op.op, `op op-${op.op}`));
    li.appendChild(el("span", " " + op.path));
    if ("value" in op) li.appendChild(el("span", " " + JSON.stringify(op.value)));
    if ("from" in op) li.appendChild(el("span", " from " + op.from));
    list.appendChild(li);
  });
}

function showDiffLine(side, line) {
  showTab("diff");
  saveState();
  for (const old of document.querySelectorAll("#diff span.flash")) old.classList.remove("flash");
  const target = document.querySelector(`#diff span[data-${side}="${Number(line)}"]`);
  if (!target) return;
  target.classList.add("flash");
  target.scrollIntoView({ block: "center" });
}

function renderDomain(r) {
  if (r.domainXML) {
    $("domain-note").textContent = `The libvirt domain virt-launcher would define when the stored VM starts (under ${r.domainXMLPolicy}).`;
    $("domain").textContent = r.domainXML;
  } else {
    $("domain-note").textContent = "No domain XML: " + (r.domainXMLError || "not available");
    $("domain").textContent = "";
  }
}

function renderResize(r) {
  const note = $("resize-note");
  const z = r.resize;
  $("resize-diff").replaceChildren();
  $("resize-warnings").replaceChildren();
  if (!z) {
    note.textContent = r.flat
      ? "Pick an instance type (and/or a preference) to see the stored VM after an UPDATE that names it."
      : "The stored VM keeps its references: choose the expand or expandAll policy to resize a flat VM.";
    return;
  }
  if (!z.allowed) {
    const causes = (z.conflicts || []).map((c) => `${c.field}: ${c.message}`);
    const err = z.error ? [z.error.message] : [];
    note.textContent = "Resize refused: " + [z.message, ...causes, ...err].filter(Boolean).join("; ");
    renderWarnings($("resize-warnings"), z.warnings || []);
    return;
  }
  const replaced = (z.replaced || []).length;
  note.textContent = `Resized: ${(z.patch || []).length} JSONPatch operation(s) from the stored VM` +
    (replaced ? `, ${replaced} hand-written value(s) replaced.` : ".");
  renderWarnings($("resize-warnings"), z.warnings || []);
  const stored = r.storedYAML;
  renderDiff($("resize-diff"), stored, z.vmYAML, z.diff);
}

function showTab(name) {
  if (!$("tab-" + name)) return;
  tab = name;
  for (const b of document.querySelectorAll(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const p of document.querySelectorAll(".tab")) p.hidden = p.id !== "tab-" + name;
}

function fillList(id, names) {
  $(id).replaceChildren(...names.map((n) => { const o = document.createElement("option"); o.value = n; return o; }));
}

function loadText(text) {
  $("text").value = text;
  $("instancetype").value = "";
  $("preference").value = "";
  paintEditor();
  runNow();
}

// ---- wiring --------------------------------------------------------------------------------------------
async function start() {
  const text = $("text");
  text.addEventListener("input", () => { marked = new Map(); underlines = new Map(); paintEditor(); schedule(500); });
  text.addEventListener("scroll", syncScroll);
  text.addEventListener("dragover", (e) => { e.preventDefault(); $("editor").classList.add("dragging"); });
  text.addEventListener("dragleave", () => $("editor").classList.remove("dragging"));
  text.addEventListener("drop", async (e) => {
    e.preventDefault();
    $("editor").classList.remove("dragging");
    const file = e.dataTransfer && e.dataTransfer.files[0];
    if (file) loadText(await file.text());
  });
  $("file").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (file) loadText(await file.text());
  });
  for (const f of FIELDS) $(f).addEventListener("change", () => runNow());
  $("run").addEventListener("click", () => runNow());
  $("copy-link").addEventListener("click", async () => {
    await saveState();
    try { await navigator.clipboard.writeText(location.href); $("copy-link").textContent = "Link copied"; }
    catch (err) { $("copy-link").textContent = "Link in the address bar"; }
    setTimeout(() => { $("copy-link").textContent = "Copy link"; }, 2000);
  });
  for (const b of document.querySelectorAll(".tabs button")) {
    b.addEventListener("click", () => { showTab(b.dataset.tab); saveState(); });
  }
  const [catalog, samples] = await Promise.all([getJSON("catalog"), getJSON("samples")]);
  $("source").textContent = `${catalog.source}; server policy ${catalog.policy}` +
    (catalog.vmPolicyOverrides ? ", VM annotations may choose the policy" : "") +
    `; ${catalog.instancetypes.length} instance types, ${catalog.preferences.length} preferences; nothing is written`;
  $("policy").options[0].textContent = `server default (${catalog.policy})`;
  fillList("instancetypes", catalog.instancetypes);
  fillList("preferences", catalog.preferences);
  for (const s of samples) {
    const b = el("button", s.name, "sample");
    b.type = "button";
    b.title = s.title;
    b.addEventListener("click", () => loadText(s.text));
    $("samples").appendChild(b);
  }
  if (await restoreState()) {
    paintEditor();
    runNow();
  } else if (samples.length) {
    loadText(samples[0].text);
  }
}

document.addEventListener("DOMContentLoaded", start);
