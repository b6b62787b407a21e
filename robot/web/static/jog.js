// The page's Jog card: the rig moved by hand between runs (POST /api/jog,
// as `cuberobot jog`). A six-motor rig: a face a quarter either way, or a
// number of motor steps to align it. A flipper or two-gripper rig: robot
// moves made from its home. A job a stopped run left unfinished is given
// up only when the person says so.
import { getJSON, post } from "./api.js";

const $ = (id) => document.getElementById(id);
const jog = { last: null, busy: false };

function say(text, isError) {
  $("jog-message").textContent = text || "";
  $("jog-message").classList.toggle("error", !!isError);
}

function buttons() {
  return document.querySelectorAll("#jog-area button");
}

async function send(body) {
  if (jog.busy) return;
  jog.busy = true;
  jog.last = body;
  $("jog-give-up").hidden = true;
  for (const b of buttons()) b.disabled = true;
  say("moving…");
  try {
    const r = await post("/api/jog", body);
    if (!r.ok) {
      const err = (r.body && r.body.error) || {};
      say(err.message || "refused (" + r.status + ")", true);
      $("jog-give-up").hidden = err.kind !== "unfinished-job";
      return;
    }
    say(r.body.message);
    const log = $("jog-log");
    log.textContent = "";
    for (const line of r.body.moves || []) {
      log.append(Object.assign(document.createElement("li"), { textContent: line }));
    }
  } finally {
    for (const b of buttons()) b.disabled = false;
    jog.busy = false;
  }
}

function faceButtons() {
  const box = $("jog-faces");
  for (const turns of [1, -1]) {
    for (const face of "URFDLB") {
      const name = face + (turns < 0 ? "'" : "");
      const b = Object.assign(document.createElement("button"), {
        type: "button", textContent: name,
        title: `turn ${face} a quarter ${turns < 0 ? "anti" : ""}clockwise` });
      b.dataset.face = face;
      b.dataset.turns = String(turns);
      b.addEventListener("click", () => send({ face, turns }));
      box.append(b);
    }
  }
}

$("jog-steps-go").addEventListener("click", () => {
  const steps = Number($("jog-steps").value);
  if (!Number.isInteger(steps) || steps === 0) {
    say("motor steps: a whole number, not 0 (negative: anticlockwise)", true);
    return;
  }
  send({ face: $("jog-face").value, steps });
});
$("jog-moves-go").addEventListener("click", () => {
  const moves = $("jog-moves").value.trim();
  if (!moves) { say("type robot moves first, separated by commas", true); return; }
  send({ moves });
});
$("jog-give-up").addEventListener("click", () => {
  if (jog.last) send(Object.assign({}, jog.last, { give_up_job: true }));
});

// What applies to the rig comes with it (``does``: app/kinds.py): robot moves or a face's steps.
async function setUp() {
  const r = await getJSON("/api/status");
  const rig = (r.ok && r.body.rig) || {};
  const does = rig.does || {};
  const byMoves = !!does.robot_moves;
  $("jog-faces").hidden = byMoves;
  $("jog-steps-row").hidden = byMoves;
  $("jog-moves-row").hidden = !byMoves;
  if (byMoves) {
    $("jog-moves").placeholder = does.jog_example;
    $("jog-hint").textContent = `Make robot moves on the ${rig.kind} rig by hand between runs, to check ` +
      "each part: it goes home first, then makes the moves, each checked against its rules before anything moves " +
      `(e.g. ${does.jog_example}). To find a servo's angles, set them on their own ` +
      `(e.g. ${does.servo_example}) and copy those that look right into the config. ` +
      "The emergency stop above stops a jog.";
  } else {
    faceButtons();
  }
}

setUp();
