// The configuration in force, read-only (GET /api/config, docs/api.md): each value with where it comes
// from, so that a value the set-up file does not show (an override the Calibrate card or
// `cuberobot calibrate` saved) is never a surprise. Nothing here changes the configuration.
import { getJSON } from "./api.js";
import { $, el } from "./dom.js";

// A value as one line: a view's corners as "U (x, y) …" per face, a list joined, absent as "none".
function shown(value) {
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.map(shown).join(", ");
  if (typeof value === "object") {
    return Object.entries(value).map(([k, v]) => `${k}: ${shown(v)}`).join("; ");
  }
  return String(value);
}

let last = null;

function draw() {
  const list = $("config-list");
  list.textContent = "";
  if (!last) return;
  const all = $("config-defaults").checked;
  for (const s of last.settings) {
    if (!all && s.source === "default") continue;
    const source = el("span", { className: "source", textContent: s.source });
    source.dataset.source = s.source;
    const li = el("li", {}, el("code", { textContent: s.key }),
      el("span", { className: "value", textContent: shown(s.value) }), source);
    li.dataset.key = s.key;
    li.dataset.source = s.source;
    list.append(li);
  }
}

async function load() {
  const r = await getJSON("/api/config");
  $("config-load").textContent = "Read again";
  if (!r.ok) {
    last = null;
    draw();
    $("config-setup").textContent = (r.body.error && r.body.error.message) || `refused (${r.status})`;
    $("config-override").textContent = "";
    return;
  }
  last = r.body;
  $("config-setup").textContent = `set-up file: ${last.setup}`;
  $("config-override").textContent = last.override
    ? "override: " + last.override.message
    : "overrides: none; every value is the set-up file's or the default.";
  draw();
}

$("config-load").addEventListener("click", load);
$("config-defaults").addEventListener("change", draw);
