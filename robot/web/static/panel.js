// The panel's page: follows the run through the server's event stream,
// sends Start, Stop, the emergency stop and a person's fixes to the API.
// An ES module: the cube's drawing comes from cube.js, the API calls from
// api.js; tools.js takes showCube from here.
import { getJSON, post } from "./api.js";
import { COLOUR_NAMES, COLOURS, Cube3D, FACES, HOME, Net, showDoubt, SOLVED } from "./cube.js";

const $ = (id) => document.getElementById(id);

const page = {
  status: null,
  facelets: SOLVED, // what the net and the cube show
  doubtful: new Set(),
  wrong: new Set(),
  painted: new Map(), // stickers a person painted while the scan waits: index -> letter
  fixing: false,
  seq: 0, // the last event shown: a stream that reconnects replays the run, and what was shown is not shown again
  pick: null, // the palette colour picked, or null: a tap cycles
  steps: [],
  turn: 0,
  started: 0,
  estimate: 0,
  timer: null,
  dry: false, // a dry run is going on (its card says so until it ends)
  latched: false, // the rig's emergency stop is latched: the badge says so while nothing runs
  lastTurnAt: 0, // when the last turn started (performance.now()): the next turn is drawn over as long
  lastScanMoveAt: 0, // the same for a scan's robot moves (a rig that moves the cube)
  mechanism: "", // a rig that moves the cube (flipper, two-gripper): its kind; each of its moves is a "turn"
  heldUnknown: false, // such a rig's hold is not known since a jog (stopped part-way, servo angles set by hand)
};

const cube = new Cube3D($("cube3d"), window.matchMedia("(max-width: 480px)").matches ? 36 : 44);
cube.draggable($("viewport"));
const net = new Net($("net"), tap);

for (const f of FACES) {
  const b = document.createElement("button");
  b.type = "button";
  b.style.background = COLOURS[f];
  b.dataset.letter = f;
  b.title = COLOUR_NAMES[f];
  b.setAttribute("aria-label", "paint " + COLOUR_NAMES[f]);
  b.addEventListener("click", () => {
    page.pick = page.pick === f ? null : f;
    for (const p of $("palette").children) p.classList.toggle("picked", p.dataset.letter === page.pick);
  });
  $("palette").appendChild(b);
}

// The scan's stickers with a person's painting on top: the same doubt shown again (the event
// stream reconnecting, a late event) must not undo what they painted.
function withPainting(facelets) {
  let out = facelets;
  for (const [i, letter] of page.painted) out = out.slice(0, i) + letter + out.slice(i + 1);
  return out;
}

function drawNet() {
  const doubtful = page.fixing ? page.doubtful : new Set();
  net.show(page.facelets, doubtful, page.wrong);
  showDoubt($("fix-help"), $("fix-list"), page.facelets, doubtful, tap);
}

// Tap a sticker while a scan waits for a fix: paint it with the picked colour, or cycle it.
function tap(i) {
  if (!page.fixing || i % 9 === 4) return;
  const now = page.facelets[i];
  const next = page.pick && page.pick !== now ? page.pick : FACES[(FACES.indexOf(now) + 1) % 6];
  page.facelets = page.facelets.slice(0, i) + next + page.facelets.slice(i + 1);
  page.painted.set(i, next);
  page.wrong.clear();
  $("fix-message").textContent = "";
  drawNet();
  cube.show(page.facelets);
}

function say(text, isError) {
  // signed out, the run's card is hidden: the emergency stop's answer shows on the sign-in screen
  for (const id of ["message", "signin-message"]) {
    $(id).textContent = text || "";
    $(id).classList.toggle("error", !!isError);
  }
}

async function command(path, body) {
  const r = await post(path, body);
  if (!r.ok) say(r.body.error ? r.body.error.message : "refused (" + r.status + ")", true);
  return r;
}

// The metric beside the method: what the two-phase search makes shortest, the list from the one the
// service answers (GET /api/solve/options), the config's own choice selected.
const METRIC_NAMES = { htm: "moves (face turns)", qtm: "quarter turns", axial: "axial turns",
                       rig: "rig (the time this rig takes)" };
async function loadMetrics() {
  const r = await getJSON("/api/solve/options");
  if (!r.ok) return;
  const select = $("metric");
  select.replaceChildren(...r.body.metrics.map((m) => {
    const o = document.createElement("option");
    o.value = m;
    o.textContent = METRIC_NAMES[m] || m;
    o.selected = m === r.body.rig_metric;
    return o;
  }));
}
function chosen() {
  if (page.mechanism) return {}; // the rig's own loop: no method or metric to choose
  const method = $("method").value;
  return method === "cfop" ? { method } : { method, metric: $("metric").value };
}
// A rig that moves the cube (flipper, two-gripper) plans its own robot moves in its own metric: the
// method and metric selectors do not apply there, and say why (on the label: a disabled control shows
// no tooltip in every browser). The dry run is another card and stays.
function showChoices() {
  const why = page.mechanism
    ? `a ${page.mechanism} rig solves with two-phase and picks the plan cheapest in its own robot moves ` +
      "(their seconds, plus 0.05 s a move): the method and metric do not apply"
    : "";
  for (const id of ["method", "metric"]) {
    $(id).disabled = !!page.mechanism;
    $(id).closest("label").title = why;
  }
}
$("method").addEventListener("change", () => { $("metric-label").hidden = $("method").value === "cfop"; });
$("start").addEventListener("click", () => { say("starting…"); command("/api/start", chosen()); });
$("scan").addEventListener("click", () => { say("scanning…"); command("/api/scan"); });
$("stop").addEventListener("click", () => command("/api/stop").then((r) => r.ok && say("stopping after this turn…")));
$("estop").addEventListener("click", async () => {
  const r = await post("/api/estop");
  say(r.body.message || (r.body.error && r.body.error.message) || "emergency stop sent", !r.ok);
  if (r.ok && r.body.sent) { page.latched = true; showState($("state").dataset.state, page.status); }
});
$("clear-estop").addEventListener("click", async () => {
  const r = await command("/api/estop/clear");
  if (r.ok) { say(r.body.message); page.latched = false; }
  if (r.body.rig) showRig(r.body.rig);
});
$("accept").addEventListener("click", async () => {
  const r = await post("/api/answer", { action: "accept", facelets: page.facelets });
  if (r.ok) return;
  const err = r.body.error || {};
  page.wrong = new Set(err.positions || []);
  $("fix-message").textContent = err.message || "refused";
  drawNet();
});
$("rescan").addEventListener("click", () => command("/api/answer", { action: "rescan" }));

// ---------------------------------------------------------------- the run as it happens

const LABELS = { idle: "idle", scanning: "scanning", needs_help: "needs your help", solving: "solving",
                 turning: "turning", done: "done", failed: "failed", stopped: "stopped" };

function showState(state, status) {
  let text = LABELS[state] || state;
  if (state === "done" && status && status.result) text = status.result === "already-solved" ? "solved" : status.result;
  if (state === "stopped" && status && status.estop) text = "emergency stop";
  const running = ["scanning", "needs_help", "solving", "turning"].includes(state);
  // After the run (a dry run's green "dry-run", a "solved"), an emergency stop pressed since is what
  // the rig is in: the badge must not stay green.
  if (!running && page.latched) { text = "emergency stop"; state = "stopped"; }
  $("state").textContent = text;
  $("state").dataset.state = state;
  $("start").disabled = running || page.latched; // the server refuses a start while latched, too
  $("scan").disabled = running || page.latched;
  $("stop").disabled = !running;
  setFixing(state === "needs_help");
  if (running && !page.timer) page.timer = setInterval(showTimes, 250);
  if (!running && page.timer) { clearInterval(page.timer); page.timer = null; }
}

function setFixing(on) {
  // a phone shows the run's cards first: take it to the stickers in doubt when the scan asks for help
  if (on && !page.fixing && window.matchMedia("(max-width: 700px)").matches) {
    $("net-area").scrollIntoView({ block: "start" });
  }
  page.fixing = on;
  $("fix-buttons").hidden = !on;
  $("fix-help").hidden = !on;
  $("fix-how").hidden = !on;
  $("fix-why").hidden = !on || !$("fix-why-text").textContent;
  if (!on) { page.wrong.clear(); page.painted.clear(); $("fix-message").textContent = ""; }
  drawNet();
}

function showSteps() {
  const ol = $("steps");
  if (ol.children.length !== page.steps.length) {
    ol.textContent = "";
    for (const s of page.steps) {
      const li = document.createElement("li");
      li.textContent = s;
      ol.appendChild(li);
    }
  }
  [...ol.children].forEach((li, i) => {
    li.classList.toggle("done", i < page.turn);
    li.classList.toggle("current", i === page.turn);
  });
  // On a phone the turns are one row that scrolls sideways: keep the current one in the middle of it
  // (the list's own scroll, never the page's, which would pull the cube off the screen).
  const current = ol.children[page.turn];
  if (current && ol.scrollWidth > ol.clientWidth) {
    ol.scrollLeft = current.offsetLeft - (ol.clientWidth - current.offsetWidth) / 2;
  }
  $("turn-line").textContent = page.steps.length
    ? `${page.mechanism ? "robot move" : "turn"} ${Math.min(page.turn + 1, page.steps.length)} of ` +
      `${page.steps.length}` : "no turns yet";
}

// A rig that moves the cube: the robot move under way and how the rig holds the cube (which face is
// up and which at the front; the 3-D cube is drawn held so).
const FACE_NAMES = { U: "U (white)", R: "R (red)", F: "F (green)", D: "D (yellow)", L: "L (orange)", B: "B (blue)" };
function showHeld(step, held) {
  $("held").hidden = !page.mechanism;
  if (!page.mechanism) return;
  // "" after a run has begun (no orientation yet) or since a jog left the hold unknown
  const where = held && held.length === 6 ? `holds ${FACE_NAMES[held[0]]} up, ${FACE_NAMES[held[2]]} at the front`
    : page.heldUnknown ? "how it holds the cube is not known since the jog: the next Start scans it" : "";
  $("held").textContent = [step ? `robot move: ${step}` : "", where].filter(Boolean).join(" · ");
  $("held").dataset.held = held || "";
}

// With CFOP each turn belongs to a stage (the cross, an F2L pair, OLL or PLL with its case).
function showStage(stage) {
  $("stage").hidden = !stage;
  $("stage").textContent = stage ? "stage: " + stage : "";
}

// The latch as the rig reports it (its STATUS and events, sent on the stream as "rig"), whoever
// pressed the stop: Clear is offered whenever the rig is latched.
function showRig(rig) {
  if (!rig) return;
  const latched = !!(rig.connected && rig.estop_latched);
  if (rig.connected) page.latched = latched;
  const running = ["scanning", "needs_help", "solving", "turning"].includes($("state").dataset.state);
  $("start").disabled = running || page.latched;
  $("scan").disabled = running || page.latched;
  $("latch").hidden = !latched;
  $("clear-estop").hidden = !latched;
  document.body.dataset.latched = latched ? "yes" : "no";
  const mechanism = rig.kind && rig.kind !== "six-motor";
  $("rig-line").textContent = mechanism && rig.simulated
    ? `the ${rig.firmware ? "emulated" : "virtual"} ${rig.kind} rig: Start scans, solves and turns on it, ` +
      "one robot move at a time"
    : mechanism && rig.connected ? `the ${rig.kind} rig on ${rig.port}` +
      (rig.estop_latched ? " · emergency stop latched" : "") + " · reached at each run, jog or stop"
    : rig.connected ? `rig on ${rig.port}` + (rig.estop_latched ? " · emergency stop latched" : "") +
      " · its start button starts a run"
    : `rig not connected (${rig.message}): whether its emergency stop is latched is not known until it is`;
  document.body.dataset.latched = rig.connected ? document.body.dataset.latched : "unknown";
}

function showTimes() {
  if (!page.started) { $("times").textContent = ""; return; }
  const elapsed = (Date.now() / 1000 - page.started);
  $("times").textContent = `elapsed ${elapsed.toFixed(1)} s` +
    (page.estimate ? ` · turning estimated ${page.estimate.toFixed(1)} s` : "");
}

// Each camera's picture with its name under it in the page's own text (the words drawn into the
// picture shrink with it on a phone).
function showCameras(views, capture) {
  const box = $("cameras");
  box.textContent = "";
  for (const v of views) {
    const img = document.createElement("img");
    img.alt = "camera " + v;
    img.src = `/api/images/${encodeURIComponent(v)}.jpg?c=${capture}-${Date.now()}`;
    const figure = document.createElement("figure");
    const caption = document.createElement("figcaption");
    caption.textContent = `camera ${v}: the last scan`;
    figure.append(img, caption);
    box.appendChild(figure);
  }
}

function onStatus(s) {
  if (typeof s.seq === "number" && s.seq < page.seq) page.seq = 0; // a new server: its events start at 1 again
  page.status = s;
  page.mechanism = (s.rig && s.rig.kind) || s.rig_kind || "";
  if (page.mechanism === "six-motor") page.mechanism = "";
  showChoices();
  page.steps = s.steps || [];
  page.turn = s.turn || 0;
  page.started = s.started || 0;
  page.estimate = s.estimated_s || 0;
  page.doubtful = new Set(s.doubtful || []);
  if (s.facelets) {
    page.facelets = s.state === "needs_help" ? withPainting(s.facelets) : s.facelets;
    cube.show(page.facelets);
  }
  cube.hold(s.orientation || HOME);
  page.heldUnknown = !!page.mechanism && !s.orientation;
  drawNet();
  showSteps();
  showHeld(s.steps && s.turn ? s.steps[s.turn - 1] : "", s.orientation);
  showTimes();
  if (s.views && s.views.length) showCameras(s.views, s.capture);
  showRig(s.rig); // first: the badge shows the rig's latch
  showState(s.state, s);
  showStage(s.state === "turning" ? s.stage : "");
  if (s.state === "needs_help") {
    $("fix-why-text").textContent = s.why || "";
    $("fix-why").hidden = !s.why;
    say("the scan needs your help: check the stickers in doubt, then Accept");
  } else if (s.message) say(s.message, s.state === "failed");
}

function onEvent(e) {
  // A replayed event (the stream reconnected) would walk the page back through the run's states and
  // undo what a person did since, such as stickers painted while a scan waits for a fix.
  if (typeof e.seq === "number") {
    if (e.seq <= page.seq) return;
    page.seq = e.seq;
    document.body.dataset.seq = String(e.seq); // the last event the page has shown (for the tests)
  }
  switch (e.kind) {
    case "connected":
      page.steps = []; page.turn = 0; page.started = e.t; page.estimate = 0; showSteps(); showStage("");
      say(`connected to the rig on ${e.port}`);
      break;
    case "started":
      if (e.by === "button") say("started by the rig's button");
      page.heldUnknown = false;
      cube.hold(HOME); showHeld("", page.mechanism ? HOME : "");
      break;
    case "scanning": say(`${e.purpose}: capture ${e.capture}`); page.lastScanMoveAt = 0; break;
    case "recapture": say(e.text); break;
    case "scan-move": {
      // A rig that moves the cube shows the camera each face: the cube is drawn turned as the rig turns it,
      // over about the time the last such move took (a scan's moves come at the rig's pace).
      const now = performance.now();
      const each = page.lastScanMoveAt ? now - page.lastScanMoveAt : 400;
      page.lastScanMoveAt = now;
      if (e.rotation) cube.turnWhole(e.rotation.slot, e.rotation.quarters, e.orientation, Math.max(60, Math.min(600, 0.85 * each)));
      else cube.settleHeld(e.orientation);
      showHeld(e.step, e.orientation);
      break;
    }
    case "scan":
      page.doubtful = new Set(e.doubtful);
      // a person's painting in progress is never overwritten by a picture of the cube
      if (e.purpose === "scan" && !page.fixing) { page.facelets = e.facelets; cube.show(e.facelets); }
      showCameras(e.views, e.t);
      drawNet();
      break;
    case "doubt":
      page.doubtful = new Set(e.doubtful);
      page.facelets = withPainting(e.facelets);
      cube.show(page.facelets);
      // the scan's whole explanation under "why"; the page says in one line what to do
      $("fix-why-text").textContent = e.text;
      $("fix-why").hidden = false;
      say("the scan needs your help: check the stickers in doubt, then Accept");
      drawNet();
      break;
    case "fix-invalid": $("fix-message").textContent = e.text; break;
    case "solving": say("solving…"); page.facelets = e.facelets; cube.show(e.facelets); drawNet(); break;
    case "solution":
      page.dry = !!e.dry_run;
      if (e.dry_run) { page.facelets = e.facelets; cube.show(e.facelets); drawNet(); page.started = e.t; }
      page.steps = e.steps; page.turn = 0; page.estimate = e.estimated_s;
      if (e.orientation) { cube.hold(e.orientation); showHeld("", e.orientation); }
      // the moves as the terminal prints them (the event's `moves`), not the scanned stickers: those are
      // on the cube and the net already, and on a phone they pushed the cube off the first screen
      say(e.dry_run ? e.text : `solution ${e.moves} (${e.length} moves, ${e.steps.length} ` +
          `${e.orientation ? "robot moves" : "turns"}, ~${Number(e.estimated_s).toFixed(1)} s)`);
      showSteps(); break;
    case "turn-started": {
      // The cube starts turning the layer as the rig does (not when the rig reports it done, which left
      // it a turn behind the highlighted one), over about the time the last turn took.
      const now = performance.now();
      const each = page.lastTurnAt && e.index > 0 ? now - page.lastTurnAt
        : 1000 * page.estimate / Math.max(1, e.turns);
      page.lastTurnAt = now;
      page.latched = false; // a rig that turns is not stopped
      page.turn = e.index; showSteps(); showStage(e.stage);
      const ms = Math.max(60, Math.min(600, 0.85 * each));
      if (e.orientation === undefined) cube.begin(e.step, ms); // a six-motor rig: the step is the turn
      else if (e.move) cube.begin(e.move, ms); // a layer turn: the cube's face at the turning slot
      else if (e.rotation) cube.turnWhole(e.rotation.slot, e.rotation.quarters, e.orientation, ms);
      if (e.orientation !== undefined) showHeld(e.step, e.orientation);
      break;
    }
    case "turn-done":
      page.turn = e.index + 1;
      page.facelets = e.state_facelets;
      cube.settle(e.state_facelets);
      if (e.orientation) cube.settleHeld(e.orientation);
      showSteps();
      if (e.stage) showStage(e.stage);
      drawNet();
      break;
    case "jogged": // moved by hand between runs: the cube follows, where what the jog did is known
      if (e.facelets) { page.facelets = e.facelets; cube.show(e.facelets); drawNet(); }
      page.heldUnknown = !!page.mechanism && !e.orientation;
      if (e.orientation) cube.hold(e.orientation);
      showHeld("", e.orientation);
      break;
    case "confirmed": say(e.solved ? "the confirmation scan shows a solved cube" : "the confirmation scan disagrees", !e.solved); break;
    case "finished":
      page.status = Object.assign(page.status || {}, { result: e.status, estop: !!e.estop });
      say(e.text, e.state === "failed");
      if (page.dry) { // the dry-run card said "turning on the virtual rig…": now how it ended
        page.dry = false;
        $("dry-message").textContent = e.text;
        $("dry-message").classList.toggle("error", e.state !== "done");
      }
      showStage("");
      break;
  }
  showState(e.state, Object.assign({}, page.status || {}, e.kind === "finished" ? { result: e.status, estop: !!e.estop } : {}));
}

// Without a valid token (no cookie, or a token replaced by `serve --new-token`) the page says how to
// get in, once, instead of trying the stream for ever; it looks again now and then, so that signing in
// from another tab brings it back.
function signIn(on) {
  $("signin").hidden = !on;
  document.querySelector("main").hidden = on;
  document.body.dataset.signin = on ? "yes" : "no";
  if (on) {
    $("state").textContent = "sign in";
    $("state").dataset.state = "idle";
    if (window.location.hash === "#wrong-token") {
      $("signin-message").textContent = "wrong token: the address you opened carries a token this panel " +
        "no longer takes (`cuberobot serve --new-token` replaced it, or it was cut short). Open the " +
        "address `cuberobot serve` prints now.";
    }
  }
}

async function connect() {
  const r = await getJSON("/api/status");
  if (r.status === 401) {
    signIn(true);
    setTimeout(connect, 10000);
    return;
  }
  signIn(false);
  if (!r.ok) { reconnectSoon(); return; }
  loadMetrics();
  const source = new EventSource("/api/events");
  source.addEventListener("status", (m) => onStatus(JSON.parse(m.data)));
  source.addEventListener("rig", (m) => showRig(JSON.parse(m.data)));
  source.onmessage = (m) => onEvent(JSON.parse(m.data));
  source.onerror = () => { source.close(); reconnectSoon(); };
}

function reconnectSoon() {
  $("state").textContent = "reconnecting…";
  $("state").dataset.state = "idle";
  setTimeout(connect, 2000);
}

// for the workshop pages (tools.js): show a cube read elsewhere (six photos)
export function showCube(facelets, doubtful) {
  page.facelets = facelets; page.doubtful = new Set(doubtful || []);
  cube.show(facelets); net.show(facelets, page.doubtful, new Set());
}

drawNet();
connect();
