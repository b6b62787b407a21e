// The Port card: the serial ports `cuberobot doctor` lists (GET /api/ports), and the rig connected to
// the one chosen (POST /api/port). Refused, in one line, while a run goes on or the emergency stop is
// latched (the server says so; the button is off while the page shows the latch).
import { getJSON, post } from "./api.js";

const $ = (id) => document.getElementById(id);

async function listPorts() {
  const r = await getJSON("/api/ports");
  if (!r.ok) { say((r.body.error && r.body.error.message) || `not listed (${r.status})`, true); return; }
  const { ports, current, configured, choosable, saved, kept_in: keptIn } = r.body;
  const select = $("port-select");
  select.replaceChildren(...ports.map((p) => {
    const o = document.createElement("option");
    o.value = p.name;
    o.textContent = `${p.name} (${p.describe})`;
    o.selected = current === p.name || current.endsWith(p.node);
    return o;
  }));
  $("port-current").textContent = `in use: ${current}` + (configured && configured !== current
    ? ` · the set-up file says ${configured}` : "");
  // the port chosen here before, kept over the set-up file's for the next start: where, so it is no surprise
  $("port-kept").textContent = saved ? `${saved} was chosen on this page and is kept in ${keptIn}` +
    " (over the set-up file's port; choose again, or delete its port line, to change it)" : "";
  $("port-kept").hidden = !saved;
  $("port-connect").dataset.choosable = choosable ? "yes" : "no";
  if (!choosable) say("the emulated rig (serve --firmware) has no serial port to choose");
  else if (!ports.length) say("no USB serial port found: plug the board in, then press List again");
  else say("");
  enable();
}

function say(text, bad) {
  $("port-message").textContent = text;
  $("port-message").classList.toggle("error", !!bad);
}

function enable() {
  const latched = document.body.dataset.latched === "yes";
  $("port-connect").disabled = latched || $("port-connect").dataset.choosable !== "yes" || !$("port-select").value;
  $("port-latched").hidden = !latched;
}

$("port-list").addEventListener("click", listPorts);
$("port-connect").addEventListener("click", async () => {
  $("port-connect").disabled = true;
  say(`connecting to ${$("port-select").value}…`);
  const r = await post("/api/port", { port: $("port-select").value });
  say(r.ok ? r.body.message : (r.body.error && r.body.error.message) || `refused (${r.status})`,
      !r.ok || !r.body.connected);
  if (r.ok) {
    const current = r.body.rig && r.body.rig.port;
    if (current) $("port-current").textContent = `in use: ${current}`;
    $("port-kept").hidden = true;  // the message says where it is kept now
  }
  enable();
});
// the latch as the page shows it (panel.js keeps it on the body)
new MutationObserver(enable).observe(document.body, { attributes: true, attributeFilter: ["data-latched"] });
// listed when the card comes on screen (its tab opened on a phone; scrolled to on a wide screen)
let listed = false;
new IntersectionObserver((seen) => {
  if (seen[seen.length - 1].isIntersecting && !listed) { listed = true; listPorts(); }
  else if (!seen[seen.length - 1].isIntersecting) listed = false;
}).observe($("port-area"));
