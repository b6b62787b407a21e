// The Host card: the machine the panel runs on (GET /api/host): its load, its temperature where the
// board has a sensor, the free disk of the state folder.
import { getJSON } from "./api.js";

const $ = (id) => document.getElementById(id);
const EVERY_MS = 5000;

function bytes(n) {
  if (typeof n !== "number") return "not known";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function row(list, name, value, warn) {
  const dt = document.createElement("dt");
  dt.textContent = name;
  const dd = document.createElement("dd");
  dd.textContent = value;
  dd.dataset.name = name;
  if (warn) dd.className = "warn";
  list.append(dt, dd);
}

async function showHost() {
  const r = await getJSON("/api/host");
  if (!r.ok) {
    $("host-message").textContent = (r.body.error && r.body.error.message) || `not read (${r.status})`;
    return;
  }
  const h = r.body;
  const list = document.createElement("dl");
  list.id = "host"; list.className = "host";
  const busy = h.load[0] > h.cpus; // more waiting than the cores can take: turns may come late
  row(list, "load", `${h.load.map((x) => x.toFixed(2)).join(" · ")} (1, 5, 15 min; ${h.cpus} core(s))` +
    (busy ? ": busier than its cores" : ""), busy);
  const hot = typeof h.temperature_c === "number" && h.temperature_c >= 80; // a Pi slows itself down there
  row(list, "temperature", typeof h.temperature_c === "number"
    ? `${h.temperature_c.toFixed(1)} °C (${h.temperature_source})${hot ? ": hot, the board may slow down" : ""}`
    : h.temperature_source, hot);
  const low = typeof h.disk.free_percent === "number" && h.disk.free_percent < 5;
  row(list, "free disk", h.disk.free_bytes === null ? h.disk.message
    : `${bytes(h.disk.free_bytes)} of ${bytes(h.disk.total_bytes)} (${h.disk.free_percent}%)` +
      (low ? ": nearly full, run records may stop being written" : ""), low);
  row(list, "state folder", h.disk.path);
  $("host").replaceWith(list);
  $("host-message").textContent = `read at ${new Date().toLocaleTimeString()}`;
}

// Read while the card is on screen (an IntersectionObserver: its tab opened on a phone, scrolled to on
// a wide screen, the window resized), every 5 s; not at all while nobody can see it.
let timer = null;
new IntersectionObserver((seen) => {
  const visible = seen[seen.length - 1].isIntersecting;
  if (visible && !timer) {
    showHost();
    timer = setInterval(() => { if (document.visibilityState === "visible") showHost(); }, EVERY_MS);
  } else if (!visible && timer) {
    clearInterval(timer);
    timer = null;
  }
}).observe($("host-area"));
