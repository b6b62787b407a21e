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
  run: 0, // the run the page shows (the server's number): a new one resets the clock and the badge
  started: 0, // when that run started, by the server's clock (s since the epoch); 0: none
  ended: 0, // when it ended, by the server's clock; 0 while it goes on
  clockOffset: 0, // the server's clock minus this browser's (s): a phone's clock may be minutes off
  clearedRun: -1, // the stop was cleared after this run ended: its "emergency stop"/"failed" is over
  estimate: 0,
  timer: null,
  runKind: "", // the shown run's kind ("solve", "scan", "dry-run"): a dry run's time is in its own card
  latched: false, // the rig's emergency stop is latched: the badge says so while nothing runs
  lastTurnAt: 0, // when the last turn started (performance.now()): the next turn is drawn over as long
  lastScanMoveAt: 0, // the same for a scan's robot moves (a rig that moves the cube)
  mechanism: "", // a rig that moves the cube (flipper, two-gripper): its kind; each of its moves is a "turn"
  heldUnknown: false, // such a rig's hold is not known since a jog (stopped part-way, servo angles set by hand)
  shown: null, // the last [state, status] showState was given
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
  showChoices(); // a rig that moves the cube: what applies, not the list
}
function chosen() {
  if (page.mechanism) return {}; // the rig's own loop: no method or metric to choose
  const method = $("method").value;
  return method === "cfop" ? { method } : { method, metric: $("metric").value };
}
// A rig that moves the cube (flipper, two-gripper) plans its own robot moves in its own metric: the
// method and metric selectors do not apply there, and say why (on the label: a disabled control shows
// no tooltip in every browser). The dry run is another card and stays.
function only(value, text) {
  const o = document.createElement("option");
  o.value = value; o.textContent = text; o.selected = true;
  return o;
}
function showChoices() {
  const why = page.mechanism
    ? `a ${page.mechanism} rig solves with two-phase and picks the plan cheapest in its own robot moves ` +
      "(their seconds, plus 0.05 s a move): the method and metric do not apply"
    : "";
  for (const id of ["method", "metric"]) {
    $(id).disabled = !!page.mechanism;
    $(id).closest("label").title = why;
  }
  // greyed, they show what does apply (not "two-phase (shortest)"), and the rule is written out: a phone
  // shows no tooltip
  if (page.mechanism) {
    $("method").replaceChildren(only("two-phase", "two-phase, planned in robot moves"));
    $("metric").replaceChildren(only("rig", "the rig's time, robot move by robot move"));
  }
  $("choices-why").hidden = !page.mechanism;
  $("choices-why").textContent = why ? why[0].toUpperCase() + why.slice(1) + "." : "";
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
// Clear asks once before it clears: a stop is cleared by a decision, never by a stray second press.
function askToClear(on) {
  $("clear-estop").hidden = on || !page.latched;
  $("clear-confirm").hidden = !on;
}
$("clear-estop").addEventListener("click", () => askToClear(true));
$("clear-no").addEventListener("click", () => askToClear(false));
$("clear-yes").addEventListener("click", async () => {
  $("clear-yes").disabled = true;
  const r = await command("/api/estop/clear");
  $("clear-yes").disabled = false;
  askToClear(false);
  if (r.ok) say(r.body.message);
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
  page.shown = [state, status]; // the run's state as last told: shown again when the latch changes
  let text = LABELS[state] || state;
  if (state === "done" && status && status.result) text = status.result === "already-solved" ? "solved" : status.result;
  if (state === "stopped" && status && status.estop) text = "emergency stop";
  const running = ["scanning", "needs_help", "solving", "turning"].includes(state);
  // A dry run is no run of the rig: its own badge colour (never the green of "solved")
  if (status && status.kind === "dry-run") {
    if (running) { text = "dry run"; state = "dry-run"; } else { text = "idle"; state = "idle"; } // the rig: idle
  }
  // The rig is the truth: once its stop is cleared after a run that ended stopped or failed, the rig is
  // idle, and the badge says so (the message line keeps how the run ended).
  if (!running && page.clearedRun === page.run && ["stopped", "failed", "dry-failed"].includes(state)) {
    text = "idle"; state = "idle";
  }
  // After the run (a dry run's badge, a "solved"), an emergency stop pressed since is what the rig is
  // in: the badge must not stay as it was.
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
  drawSteps($("steps"), $("turn-line"), page.steps, page.turn, page.mechanism);
}

// A run's turns as a list, the one under way highlighted, and "turn N of M" (or robot moves) on `line`.
function drawSteps(ol, line, steps, turn, mechanism) {
  if (ol.children.length !== steps.length) {
    ol.textContent = "";
    for (const s of steps) {
      const li = document.createElement("li");
      li.textContent = s;
      ol.appendChild(li);
    }
  }
  [...ol.children].forEach((li, i) => {
    li.classList.toggle("done", i < turn);
    li.classList.toggle("current", i === turn);
  });
  // On a phone the turns are one row that scrolls sideways: keep the current one in the middle of it
  // (the list's own scroll, never the page's, which would pull the cube off the screen).
  const current = ol.children[turn];
  if (current && ol.scrollWidth > ol.clientWidth) {
    ol.scrollLeft = current.offsetLeft - (ol.clientWidth - current.offsetWidth) / 2;
  }
  line.textContent = steps.length
    ? `${mechanism ? "robot move" : "turn"} ${Math.min(turn + 1, steps.length)} of ${steps.length}`
    : "no turns yet";
}

// ---------------------------------------------------------------- a dry run, in its own card
// A dry run turns a virtual rig of its own: the real rig is not touched, so the run's cards (Progress,
// Cube) are left showing the rig's last run; the dry run's turns, cube, time and badge are its card's.

const dry = { cube: null, steps: [], turn: 0, estimate: 0, lastTurnAt: 0, mechanism: false };
function dryCube() {
  if (!dry.cube) {
    dry.cube = new Cube3D($("dry-cube3d"), window.matchMedia("(max-width: 480px)").matches ? 30 : 36);
    dry.cube.draggable($("dry-viewport"));
  }
  return dry.cube;
}
const DRY_BADGES = { done: ["done", "dry-done"], failed: ["failed", "dry-failed"], stopped: ["stopped", "dry-failed"] };
function showDry(state, estop) {
  $("dry-progress").hidden = false;
  drawSteps($("dry-steps"), $("dry-turn-line"), dry.steps, dry.turn, dry.mechanism);
  const [text, colour] = DRY_BADGES[state] || ["turning", "dry-run"];
  $("dry-state").textContent = state === "stopped" && estop ? "emergency stop" : text;
  $("dry-state").dataset.state = colour;
}
function showDryHeld(step, held) {
  $("dry-held").hidden = !dry.mechanism;
  $("dry-held").textContent = !dry.mechanism ? "" : [step ? `robot move: ${step}` : "",
    held && held.length === 6 ? `holds ${FACE_NAMES[held[0]]} up, ${FACE_NAMES[held[2]]} at the front` : ""]
    .filter(Boolean).join(" · ");
}
function dryStatus(s) {
  dry.mechanism = !!s.orientation;
  dry.steps = s.steps || []; dry.turn = s.turn || 0; dry.estimate = s.estimated_s || 0;
  if (s.facelets) dryCube().show(s.facelets);
  dryCube().hold(s.orientation || HOME);
  showDryHeld(s.steps && s.turn ? s.steps[s.turn - 1] : "", s.orientation);
  showDry(s.state, s.estop);
  if (s.message) { $("dry-message").textContent = s.message; $("dry-message").classList.toggle("error", s.state !== "done"); }
}
function onDryEvent(e) {
  const c = dryCube();
  if (e.kind === "solution") {
    dry.mechanism = !!e.orientation;
    dry.steps = e.steps; dry.turn = 0; dry.estimate = e.estimated_s; dry.lastTurnAt = 0;
    c.show(e.facelets); c.hold(e.orientation || HOME); showDryHeld("", e.orientation);
  } else if (e.kind === "turn-started") {
    const now = performance.now();
    const each = dry.lastTurnAt && e.index > 0 ? now - dry.lastTurnAt : 1000 * dry.estimate / Math.max(1, e.turns);
    dry.lastTurnAt = now;
    dry.turn = e.index;
    const ms = Math.max(60, Math.min(600, 0.85 * each));
    if (e.orientation === undefined) c.begin(e.step, ms);
    else if (e.move) c.begin(e.move, ms);
    else if (e.rotation) c.turnWhole(e.rotation.slot, e.rotation.quarters, e.orientation, ms);
    if (e.orientation !== undefined) showDryHeld(e.step, e.orientation);
  } else if (e.kind === "turn-done") {
    dry.turn = e.index + 1;
    c.settle(e.state_facelets);
    if (e.orientation) c.settleHeld(e.orientation);
  } else if (e.kind === "finished") {
    $("dry-message").textContent = e.text;
    $("dry-message").classList.toggle("error", e.state !== "done");
  }
  showDry(e.state, e.estop);
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
// On a phone a long stage shows two lines; a tap shows it whole, another folds it again.
$("stage").addEventListener("click", () => $("stage").classList.toggle("open"));

// The latch as the rig reports it (its STATUS and events, sent on the stream as "rig"), whoever
// pressed the stop: Clear is offered whenever the rig is latched.
function showRig(rig) {
  if (!rig) return;
  const latched = !!(rig.connected && rig.estop_latched);
  const was = page.latched;
  if (rig.connected) page.latched = latched;
  const shown = $("state").dataset.state;
  const running = ["scanning", "needs_help", "solving", "turning", "dry-run"].includes(shown);
  // cleared (here, at the terminal, on the rig) after the run ended: its stopped or failed badge is over
  if (was && !page.latched && !running) page.clearedRun = page.run;
  $("start").disabled = running || page.latched;
  $("scan").disabled = running || page.latched;
  $("latch-bar").hidden = !latched;
  $("latch").hidden = !latched;
  if (!latched) askToClear(false);
  else if ($("clear-confirm").hidden) $("clear-estop").hidden = false;
  document.body.dataset.latched = latched ? "yes" : "no";
  $("rig-line").textContent = rigLine(rig);
  document.body.dataset.latched = rig.connected ? document.body.dataset.latched : "unknown";
  if (was !== page.latched && page.shown) showState(...page.shown);
}

// The rig line, in the rig's own words: what applies to it comes with it (``does``: app/kinds.py), the
// page never asks which kind it is.
function rigLine(rig) {
  const kind = rig.kind, does = rig.does || {};
  const latch = rig.estop_latched ? " · emergency stop latched" : "";
  if (!rig.connected) {
    return `the ${kind} rig is not connected (${rig.message}): whether its emergency stop is latched is ` +
      "not known until it is";
  }
  const how = does.turns ? `Start scans, solves and turns it ${does.turns}` : "Start scans, solves and turns it";
  const button = does.start_button ? "; its start button starts a run too" : "";
  if (rig.simulated) {
    const what = rig.firmware ? `the emulated ${kind} rig (its real firmware in simavr)` : `the virtual ${kind} rig`;
    return `${what}: ${how}${button}${latch}`;
  }
  const reached = does.reached_each_time ? " · reached at each run, jog or stop" : "";
  return `the ${kind} rig on ${rig.port}${latch}${reached} · ${how}${button}`;
}

// The run's time by the server's clock (its start, and its end once it has ended, come with the status and
// every event; the offset between the two clocks with the status): right after a reload, on every kind
// of rig, and from this run's start, not an older one's.
function serverNow() { return Date.now() / 1000 + page.clockOffset; }
function takeRun(run, started, ended, kind) {
  if (typeof run !== "number") return;
  if (kind !== undefined) page.runKind = kind;
  if (run !== page.run) page.clearedRun = -1;
  page.run = run;
  page.started = started || 0;
  page.ended = ended || 0;
}
function showTimes() {
  const isDry = page.runKind === "dry-run";
  const box = $(isDry ? "dry-times" : "times");
  if (!page.started) { box.textContent = ""; return; }
  const elapsed = Math.max(0, (page.ended || serverNow()) - page.started);
  const estimate = isDry ? dry.estimate : page.estimate;
  box.dataset.elapsed = elapsed.toFixed(3);
  box.textContent = `elapsed ${elapsed.toFixed(1)} s` +
    (estimate ? ` · turning estimated ${estimate.toFixed(1)} s` : "");
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
  // a rig that makes robot moves (its name, for the words; "" for one that turns faces directly)
  page.mechanism = s.rig && s.rig.does && s.rig.does.robot_moves ? s.rig.kind : "";
  showChoices();
  const isDry = s.kind === "dry-run"; // the status is a dry run's: its card shows it, not the run's cards
  if (isDry) dryStatus(s);
  page.steps = isDry ? [] : s.steps || [];
  page.turn = isDry ? 0 : s.turn || 0;
  if (typeof s.now === "number") page.clockOffset = s.now - Date.now() / 1000;
  takeRun(s.run, s.started, s.ended, s.kind);
  if (s.cleared) page.clearedRun = s.run; // the stop was cleared since this run ended (before a reload too)
  page.estimate = isDry ? 0 : s.estimated_s || 0;
  page.doubtful = new Set(isDry ? [] : s.doubtful || []);
  if (s.facelets && !isDry) {
    page.facelets = s.state === "needs_help" ? withPainting(s.facelets) : s.facelets;
    cube.show(page.facelets);
  }
  cube.hold((!isDry && s.orientation) || HOME);
  page.heldUnknown = !!page.mechanism && !isDry && !s.orientation;
  drawNet();
  showSteps();
  showHeld(!isDry && s.steps && s.turn ? s.steps[s.turn - 1] : "", isDry ? HOME : s.orientation);
  showTimes();
  if (s.views && s.views.length) showCameras(s.views, s.capture);
  showRig(s.rig); // first: the badge shows the rig's latch
  showState(s.state, s);
  showStage(s.state === "turning" ? s.stage : "");
  if (s.state === "needs_help") {
    $("fix-why-text").textContent = s.why || "";
    $("fix-why").hidden = !s.why;
    say("the scan needs your help: check the stickers in doubt, then Accept");
  } else if (s.message && !isDry) say(s.message, s.state === "failed");
  // for the page's other modules (runview.js: the progress bar, the log), after the page has taken it
  document.dispatchEvent(new CustomEvent("panel-status", { detail: s }));
}

function onEvent(e) {
  // A replayed event (the stream reconnected) would walk the page back through the run's states and
  // undo what a person did since, such as stickers painted while a scan waits for a fix.
  if (typeof e.seq === "number") {
    if (e.seq <= page.seq) return;
    page.seq = e.seq;
    document.body.dataset.seq = String(e.seq); // the last event the page has shown (for the tests)
  }
  takeRun(e.run, e.run_started, e.run_ended, e.run_kind);
  // each event once, in order (a replay after a reload too, from the server's history): runview.js
  document.dispatchEvent(new CustomEvent("panel-event", { detail: e }));
  if (page.status && typeof e.run === "number") {
    page.status = Object.assign(page.status, { run: e.run, kind: e.run_kind || page.status.kind });
  }
  if (e.run_kind === "dry-run") { // its own card; the header's badge says the panel is busy with it
    onDryEvent(e);
    showTimes();
    showState(e.state, page.status);
    return;
  }
  switch (e.kind) {
    case "connected":
      page.steps = []; page.turn = 0; page.estimate = 0; showSteps(); showStage("");
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
      page.steps = e.steps; page.turn = 0; page.estimate = e.estimated_s;
      if (e.orientation) { cube.hold(e.orientation); showHeld("", e.orientation); }
      // the moves as the terminal prints them (the event's `moves`), not the scanned stickers: those are
      // on the cube and the net already, and on a phone they pushed the cube off the first screen
      say(`solution ${e.moves} (${e.length} moves, ${e.steps.length} ` +
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
      showStage("");
      break;
  }
  showTimes();
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
