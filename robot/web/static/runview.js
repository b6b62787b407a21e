// The run at a glance, as a printer's panel shows a print: a progress bar with the turning time left,
// and a log of the run's events. Both follow what panel.js has shown (its "panel-status" and
// "panel-event" DOM events: each of the server's events once, in order, replayed from the server's
// history after a reload), so they need no event stream of their own.
//
// The bar is the plan's: how many of the plan's turns (a flipper's or two-gripper's robot moves) the
// server has reported done. The time left is the plan's estimate for the turns not yet done, at the
// rig's own pace once it has done two (a rig slower or faster than its plan: a slow motor, a virtual
// rig's ?speed=), less the time since the last one was reported, reckoned on the server's clock (the
// status's `now` gives the offset; every event's `t` is the server's), so a phone whose clock is off, or
// a page reloaded half way through, shows the same.

const $ = (id) => document.getElementById(id);

const MAX_LOG_LINES = 200; // the last 200 of the run's events: the server keeps the run's last 400

const run = {
  number: -1, // the run shown (the server's number); a new one starts the bar and the log afresh
  kind: "", // "solve", "scan" or "dry-run": the bar follows the rig's runs, the dry run has its card
  turns: 0, // the plan's turns (robot moves)
  done: 0, // reported done
  estimate: 0, // the plan's turning time (s)
  since: 0, // when the last turn was reported done, or turning began (server clock, s); 0: not yet
  began: 0, // when turning began (server clock, s); 0: not yet
  shown: null, // the time left last shown for this run: it never rises
  started: 0, // the run's start (server clock), for the log's times
  finished: "", // how it ended ("solved", "failed", …); "" while it goes on
  offset: 0, // the server's clock minus this browser's (s)
  robotMoves: false, // the plan is in robot moves (a rig that moves the cube): the turn events say so
  timer: null,
};

function serverNow() { return Date.now() / 1000 + run.offset; }

// A new run (or the first the page hears of): the bar empty, the log cleared.
function takeRun(number, kind, started) {
  if (typeof number !== "number" || number === run.number) return;
  Object.assign(run, { number, kind: kind || "", turns: 0, done: 0, estimate: 0, since: 0, began: 0,
                       shown: null, started: started || 0, finished: "", robotMoves: false });
  $("log").textContent = "";
}

// The rig's pace: the time its turns so far took over the plan's time for them (1: as planned), once
// two are done (one says little: the first waits on the rig's set-up); bounded, so that a clock step
// cannot make it absurd.
function pace() {
  if (!run.began || run.done < 2 || !run.turns || !run.estimate) return 1;
  const took = run.since - run.began;
  const planned = (run.estimate / run.turns) * run.done;
  return took > 0 && planned > 0 ? Math.min(20, Math.max(0.05, took / planned)) : 1;
}

// The time left: the plan's estimate for the turns left at the rig's pace, less the time since the last
// turn was done, but at most one turn's share: a rig running behind waits at the next turn's mark
// instead of counting down to 0 with turns still to come. It never rises within a run (a late turn, a
// pace that slows): it waits instead, as it does at a mark.
function remaining() {
  if (run.finished === "solved" || run.finished === "already-solved") return 0;
  if (!run.turns || !run.estimate) return null;
  const each = (run.estimate / run.turns) * pace();
  const planned = each * (run.turns - run.done);
  const spent = run.since ? Math.min(each, Math.max(0, serverNow() - run.since)) : 0;
  const left = Math.max(0, planned - spent);
  run.shown = run.shown === null ? left : Math.min(run.shown, left);
  return run.shown;
}

function showBar() {
  if (run.kind === "dry-run") return; // a dry run's progress is its own card's
  const bar = $("run-bar");
  const full = run.finished === "solved" || run.finished === "already-solved";
  const value = full ? 1 : run.turns ? run.done / run.turns : 0;
  bar.value = value;
  bar.dataset.done = String(full ? run.turns : run.done);
  bar.title = `${Math.floor(100 * value)}% of the plan's ${run.robotMoves ? "robot moves" : "turns"} done`;
  const left = remaining();
  const line = $("remaining");
  line.dataset.remaining = left === null ? "" : left.toFixed(3);
  line.dataset.pace = pace().toFixed(3);
  const what = run.robotMoves ? "robot moves" : "turns";
  if (full) line.textContent = "100% · 0.0 s of turning left";
  else if (run.finished && run.turns) {
    line.textContent = `${run.finished} at ${Math.floor(100 * value)}% · ${run.done} of ${run.turns} ${what}`;
  } else if (left === null) {
    line.textContent = run.kind === "scan" ? "a scan only: no turns"
      : run.number > 0 && !run.finished ? "the time left comes with the plan" : "";
  }
  else {
    // short enough for one line beside the bar on a phone (the bar shows the share; its title the %)
    line.textContent = `${run.done} of ${run.turns} ${what} · about ${left.toFixed(1)} s left`;
  }
  const ticking = !run.finished && run.since && run.done < run.turns;
  if (ticking && !run.timer) run.timer = setInterval(showBar, 250);
  if (!ticking && run.timer) { clearInterval(run.timer); run.timer = null; }
}

// ---------------------------------------------------------------- the log, in the kind's own words

function turnWords(e) {
  run.robotMoves = run.robotMoves || e.orientation !== undefined;
  return `${run.robotMoves ? "robot move" : "turn"} ${e.index + 1} of ${e.turns}: ${e.step}`;
}

// A line for an event: its own sentence where it has one, else one made from its fields; null for
// the events that say nothing a person needs to read (the start of a turn: its end is logged).
function logLine(e) {
  switch (e.kind) {
    case "turn-started": turnWords(e); return null;
    case "turn-done": return turnWords(e) + (e.stage ? ` (${e.stage})` : "") + " done";
    case "scan-move": return e.text || `${e.purpose}: robot move ${e.step}`;
    case "scanning": return e.text || `${e.purpose}: capture ${e.capture} (${(e.views || []).join(", ")})`;
    case "scan": return e.text || `${e.purpose}: read${e.valid ? "" : ", not a valid cube"}` +
      (e.doubtful && e.doubtful.length ? `, ${e.doubtful.length} sticker(s) in doubt` : "");
    case "solving": return e.text || `solving (${e.method})`;
    case "solution": return e.text || `solution ${e.moves} (${e.steps.length} steps, ~${Number(e.estimated_s).toFixed(1)} s)`;
    case "started": return e.text || `started by the ${e.by === "button" ? "rig's button" : e.by}`;
    case "connected": return e.text || `connected to the rig on ${e.port}`;
    case "answer": return e.text || `answered: ${e.action}`;
    case "confirmed": return e.text || (e.solved ? "the confirmation scan shows a solved cube" : "the confirmation scan disagrees");
    case "jogged": return e.text || "jogged";
    case "finished": return e.text || `finished: ${e.status}`;
    default: return e.text || e.kind;
  }
}

function addLog(e) {
  const text = logLine(e);
  if (!text) return;
  const li = document.createElement("li");
  const at = run.started && typeof e.t === "number" ? Math.max(0, e.t - run.started) : null;
  const time = document.createElement("span");
  time.className = "log-time";
  time.textContent = at === null ? "" : `+${at.toFixed(1)} s`;
  li.append(time, document.createTextNode(" " + (run.kind === "dry-run" ? "dry run: " : "") + text));
  li.dataset.kind = e.kind;
  li.dataset.seq = String(e.seq || "");
  if (e.state === "failed" || (e.kind === "finished" && e.status === "stopped")) li.className = "log-bad";
  const log = $("log");
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 24;
  log.appendChild(li);
  while (log.children.length > MAX_LOG_LINES) log.firstElementChild.remove();
  $("log-count").textContent = `${log.children.length} line(s), newest last` +
    (log.children.length === MAX_LOG_LINES ? ` (the last ${MAX_LOG_LINES})` : "");
  if (atBottom) log.scrollTop = log.scrollHeight; // follow the newest, unless the reader scrolled up
}

// ---------------------------------------------------------------- what panel.js has shown

document.addEventListener("panel-status", (m) => {
  const s = m.detail;
  if (typeof s.now === "number") run.offset = s.now - Date.now() / 1000;
  takeRun(s.run, s.kind, s.started);
  if (s.kind === "dry-run") return;
  // a page loaded in the middle of a run: what the status says, until the history's events come
  run.turns = s.turns || run.turns;
  run.estimate = s.estimated_s || run.estimate;
  if (["done", "failed", "stopped"].includes(s.state)) run.finished = s.result || s.state;
  if (run.finished === "solved" || run.finished === "already-solved") run.done = run.turns;
  showBar();
});

document.addEventListener("panel-event", (m) => {
  const e = m.detail;
  takeRun(e.run, e.run_kind, e.run_started);
  if (!run.started && e.run_started) run.started = e.run_started;
  addLog(e);
  if (e.run_kind === "dry-run") return;
  if (e.kind === "solution") {
    Object.assign(run, { turns: e.steps.length, done: 0, estimate: e.estimated_s || 0, since: 0, began: 0,
                         shown: null });
    run.robotMoves = e.orientation !== undefined; // a rig that moves the cube plans in robot moves
  } else if (e.kind === "turn-started" && !run.since) {
    run.since = run.began = e.t; // turning begins: the clock of the time left starts
  } else if (e.kind === "turn-done") {
    run.turns = e.turns;
    run.done = Math.max(run.done, e.index + 1);
    run.since = e.t;
  } else if (e.kind === "finished") {
    run.finished = e.status || e.state;
    if (run.finished === "solved" || run.finished === "already-solved") run.done = run.turns;
  }
  showBar();
});
