// The panel's workshop pages: live camera pictures, a dry run, calibration
// (colours, and the sticker grid by dragging corners), six photos read into
// a cube, and the last runs. Each calls one API endpoint (docs/api.md).
import { getJSON, post } from "./api.js";
import { $, el } from "./dom.js";
import { COLOUR_NAMES, COLOURS, cornerOf, FACES, Net, showDoubt } from "./cube.js";
import { showCube } from "./panel.js";

function errorText(r) {
  return (r.body && r.body.error && r.body.error.message) || ("refused (" + r.status + ")");
}

function say(id, text, isError) {
  $(id).textContent = text || "";
  $(id).classList.toggle("error", !!isError);
}

// ---------------------------------------------------------------- live view

const live = { on: false, timer: null, busy: false };

async function liveTick() {
  if (live.busy) return;
  live.busy = true;
  try {
    const r = await getJSON("/api/live");
    if (!live.on) return;
    if (!r.ok) { $("live-line").textContent = errorText(r); return; }
    const d = r.body;
    const n = (d.doubtful || []).length;
    const seen = d.seen ? ` · the camera sees ${d.seen} only (a scan has the rig show it all six faces)` : "";
    $("live-line").textContent = (d.source === "live" ? "live" : "the run's last scan") + seen +
      (d.facelets ? (n ? ` · ${n} doubtful sticker(s), ringed` : " · every sticker sure") : "");
    const box = $("cameras");
    box.textContent = "";
    const stamp = Date.now();
    for (const v of d.views || []) {
      box.append(el("img", { alt: "live camera " + v, className: "live",
                             src: `/api/live/${encodeURIComponent(v)}.jpg?t=${stamp}` }));
    }
  } finally {
    live.busy = false;
  }
}

$("live").addEventListener("click", () => {
  live.on = !live.on;
  $("live").setAttribute("aria-pressed", String(live.on));
  if (live.on) { liveTick(); live.timer = setInterval(liveTick, 1000); }
  else { clearInterval(live.timer); live.timer = null; $("live-line").textContent = ""; }
});

// ---------------------------------------------------------------- dry run

$("dry-run").addEventListener("click", async () => {
  const moves = $("dry-moves").value.trim();
  if (!moves) { say("dry-message", "type some moves first, e.g. R U R' U'", true); return; }
  const r = await post("/api/dry-run", { moves, speed: Number($("dry-speed").value) });
  if (!r.ok) { say("dry-message", errorText(r), true); return; }
  say("dry-message", "turning on the virtual rig…"); // panel.js says how it ended, in this card
  const img = $("dry-timeline");
  img.src = "/api/dry-run/timeline.png?t=" + Date.now();
  img.hidden = false;
});

// ---------------------------------------------------------------- calibration: colours

// The name as `cuberobot calibrate --profile` takes it; empty, the server names it as the terminal does
// (the set-up's profile, else "default"). A profile of that name the set-up does not use is not
// overwritten: the server says so (409) and the card asks once, with Replace it.
async function learnColours(replace) {
  const box = $("cal-result");
  box.textContent = "capturing the solved cube…";
  $("cal-colours").disabled = true;
  const name = $("cal-name").value.trim();
  const body = name ? { profile: name } : {};
  if (replace) body.replace = true;
  const r = await post("/api/calibrate", body);
  $("cal-colours").disabled = false;
  box.textContent = "";
  if (r.status === 409 && r.body.error && r.body.error.kind === "exists") {
    const again = el("button", { id: "cal-replace", type: "button", textContent: "Replace it" });
    again.addEventListener("click", () => learnColours(true));
    box.append(el("p", { id: "cal-exists", className: "warn", textContent: errorText(r) }), again);
    return;
  }
  if (!r.ok) { box.append(el("p", { className: "warn", textContent: errorText(r) })); return; }
  const d = r.body;
  const list = el("ul", { className: "colours" });
  for (const f of FACES) {
    const [red, green, blue] = d.face_colors[f];
    const sw = el("span", { className: "swatch" });
    sw.style.background = `rgb(${red}, ${green}, ${blue})`;
    list.append(el("li", {}, sw, `${f}: rgb(${red}, ${green}, ${blue})`));
  }
  box.append(list);
  box.append(verdict(d));
  box.append(el("p", { id: "cal-message", className: "hint", textContent: d.message }));
}

$("cal-colours").addEventListener("click", () => learnColours(false));

// The calibration's verdict in words, not a bare ΔE: whether the six colours can be told apart, the two
// closest by name, and what to do when they are too close.
function verdict(d) {
  const [a, b] = d.closest.faces;
  const pair = `${COLOUR_NAMES[a] || a} (${a}) and ${COLOUR_NAMES[b] || b} (${b})`;
  const need = d.too_close_below ? `; ${d.too_close_below} or more tells them apart reliably` : "";
  const p = el("p", { id: "cal-closest", className: d.too_close ? "warn" : "",
    textContent: d.too_close
      ? `Too close: ${pair} differ by only ΔE ${d.closest.delta_e}${need}. Light the cube with whiter, ` +
        "more even light (no coloured or yellowish lamp, no glare on the stickers), then press Learn the " +
        "colours again."
      : `Good: the six colours are told apart. The closest two, ${pair}, differ by ΔE ${d.closest.delta_e}` +
        `${need}.` });
  p.dataset.verdict = d.too_close ? "too-close" : "good";
  return p;
}

// A flipper or two-gripper rig reads each face in its own picture's light and keeps no colour
// profile (the command refuses to learn one): the card offers only what such a rig needs set.
async function colourCalibrationFor() {
  const r = await getJSON("/api/status");
  const rig = (r.ok && r.body.rig) || {};
  if (!rig.does || rig.does.learns_colours) return;
  const kind = rig.kind;
  $("cal-colours-row").hidden = true;
  $("cal-hint").textContent = `Colours: none to learn. A ${kind} rig shows the camera one face at a time ` +
    "and reads each in its own picture's light, so no colour profile is kept. Only the sticker grid " +
    "below needs setting, once, for the one camera.";
}

colourCalibrationFor();

// ---------------------------------------------------------------- calibration: the sticker grid

// One handle per corner of the cube the camera sees (7 for three faces, not 12 stacked where faces
// meet): a drag moves that corner on every face that has it, so the faces cannot be pulled apart.
const geo = { views: [], view: null, corners: {}, handles: [], zoom: 1 };
const SVG = "http://www.w3.org/2000/svg";
const ZOOMS = [1, 1.5, 2, 3, 4];

async function loadViews() {
  const r = await getJSON("/api/geometry");
  if (!r.ok) return;
  geo.views = r.body.views;
  const sel = $("geo-view");
  sel.textContent = "";
  for (const v of geo.views) sel.append(el("option", { value: v.name, textContent: `${v.name} (${v.faces.map((f) => f.face).join("")})` }));
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// The handles of a view: its faces' corners grouped by the cube corner they are (corners come in the
// net's order, top-left first), each handle at the mean of its members.
function handlesOf(view) {
  const byCorner = new Map();
  for (const f of view.faces) {
    for (let k = 0; k < 4; k++) {
      const key = cornerOf(f.face, k);
      if (!byCorner.has(key)) byCorner.set(key, []);
      byCorner.get(key).push([f.face, k]);
    }
  }
  return [...byCorner.values()];
}

function handlePoint(members) {
  const pts = members.map(([f, k]) => geo.corners[f][k]);
  return [0, 1].map((j) => pts.reduce((a, p) => a + p[j], 0) / pts.length);
}

function drawGrid() {
  const v = geo.view;
  const svg = $("geo-box").querySelector("svg");
  svg.textContent = "";
  // sizes in picture pixels that stay the same on the screen at any zoom: a handle a fingertip on a phone
  const unit = v.size[0] / 400 / geo.zoom;
  const r = 16 * unit;
  for (const f of v.faces) {
    const pts = geo.corners[f.face];
    svg.append(svgEl("polygon", { points: pts.map((p) => p.join(",")).join(" "), "data-face": f.face,
                                  "stroke-width": unit }));
    const cx = pts.reduce((a, p) => a + p[0], 0) / 4, cy = pts.reduce((a, p) => a + p[1], 0) / 4;
    const label = svgEl("text", { x: cx, y: cy, "text-anchor": "middle", "dominant-baseline": "middle",
                                  "font-size": 14 * unit });
    label.textContent = f.face;
    svg.append(label);
  }
  geo.handles.forEach((members, h) => {
    const [x, y] = handlePoint(members);
    svg.append(svgEl("circle", { cx: x, cy: y, r, "stroke-width": unit / 2, "data-handle": h,
                                 "data-face": members[0][0], "data-corner": members[0][1],
                                 "data-members": members.map(([f, k]) => f + (k + 1)).join(" ") }));
  });
}

function pictureAt(svg, e) {
  const p = svg.createSVGPoint();
  p.x = e.clientX; p.y = e.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}

// Press on a handle: drag the corner it stands for. Press elsewhere on a zoomed picture: move around it.
function startDrag(ev) {
  const svg = ev.currentTarget;
  const c = ev.target;
  ev.preventDefault();
  svg.setPointerCapture(ev.pointerId);
  let move;
  if (c.tagName === "circle") {
    const members = geo.handles[Number(c.dataset.handle)];
    move = (e) => {
      const q = pictureAt(svg, e);
      const [w, h] = geo.view.size;
      const to = [Math.round(Math.min(w, Math.max(0, q.x)) * 10) / 10,
                  Math.round(Math.min(h, Math.max(0, q.y)) * 10) / 10];
      for (const [f, k] of members) geo.corners[f][k] = to.slice();
      drawGrid();
    };
  } else {
    const box = $("geo-scroll"), from = [ev.clientX, ev.clientY, box.scrollLeft, box.scrollTop];
    move = (e) => { box.scrollLeft = from[2] - (e.clientX - from[0]); box.scrollTop = from[3] - (e.clientY - from[1]); };
  }
  const up = () => { svg.removeEventListener("pointermove", move); svg.removeEventListener("pointerup", up); };
  svg.addEventListener("pointermove", move);
  svg.addEventListener("pointerup", up);
}

// Zoom about the middle of what is shown, so the corner being looked at stays in sight.
function setZoom(z) {
  const box = $("geo-scroll");
  const mid = [(box.scrollLeft + box.clientWidth / 2) / geo.zoom, (box.scrollTop + box.clientHeight / 2) / geo.zoom];
  geo.zoom = z;
  $("geo-box").style.width = `${100 * z}%`;
  $("geo-zoom-level").textContent = `${Math.round(100 * z)}%`;
  box.scrollLeft = mid[0] * z - box.clientWidth / 2;
  box.scrollTop = mid[1] * z - box.clientHeight / 2;
  if (geo.view) drawGrid();
}

$("geo-zoom-in").addEventListener("click", () => setZoom(ZOOMS.find((z) => z > geo.zoom) || geo.zoom));
$("geo-zoom-out").addEventListener("click", () => setZoom([...ZOOMS].reverse().find((z) => z < geo.zoom) || geo.zoom));

$("geo-load").addEventListener("click", async () => {
  if (!geo.views.length) await loadViews();
  const v = geo.views.find((x) => x.name === $("geo-view").value);
  if (!v) { say("geo-message", "no view with corners to set", true); return; }
  geo.view = v;
  geo.corners = {};
  for (const f of v.faces) geo.corners[f.face] = f.corners.map((p) => p.slice());
  geo.handles = handlesOf(v);
  const box = $("geo-box");
  box.textContent = "";
  const img = el("img", { alt: "camera " + v.name + " with a solved cube" });
  img.addEventListener("error", () => say("geo-message", "the camera's picture could not be taken (is a run going on?)", true));
  img.src = `/api/geometry/${encodeURIComponent(v.name)}.jpg?t=${Date.now()}`;
  const svg = svgEl("svg", { viewBox: `0 0 ${v.size[0]} ${v.size[1]}`, preserveAspectRatio: "none" });
  svg.addEventListener("pointerdown", startDrag);
  box.append(img, svg);
  $("geo-zoom").hidden = false;
  setZoom(1);
  $("geo-save").disabled = false;
  say("geo-message", "drag the yellow handles onto the cube's corners, then save");
});

$("geo-save").addEventListener("click", async () => {
  const r = await post("/api/geometry", { views: { [geo.view.name]: geo.corners } });
  if (!r.ok) { say("geo-message", errorText(r), true); return; }
  say("geo-message", r.body.message);
  await loadViews();
});

loadViews();

// ---------------------------------------------------------------- six photos

for (const f of FACES) {
  const input = el("input", { type: "file", name: f, accept: "image/*", required: true });
  input.setAttribute("capture", "environment");
  const name = el("span", { className: "file-name", textContent: "no photo yet" });
  const read = el("span", { className: "face-read", id: `face-read-${f}` });
  input.addEventListener("change", () => {
    name.textContent = input.files.length ? input.files[0].name : "no photo yet";
    if (input.files.length) {
      const file = input.files[0];
      faceReads = faceReads.then(() => readFace(f, file, read));
    }
  });
  $("photo-inputs").append(el("label", {}, el("span", { textContent: `face ${f}` }), input, name, read));
}

// Each photo is read as soon as it is taken (POST /api/photos/face): its nine stickers, as the photo
// stands, shown at once, those the camera is not sure of marked, so a bad photo is retaken before the
// sixth. The whole cube is still read from all six together. One read at a time, in the order taken
// (the panel reads photos one upload at a time and turns away more than two waiting).
let faceReads = Promise.resolve();

async function readFace(face, file, box) {
  box.textContent = "reading…";
  box.className = "face-read";
  const form = new FormData();
  form.append(face, file);
  let resp, body = {};
  try {
    resp = await fetch("/api/photos/face", { method: "POST", body: form });
    try { body = await resp.json(); } catch { /* not JSON */ }
  } catch (e) {
    box.textContent = "the panel does not answer: " + e.message;
    return;
  }
  box.textContent = "";
  if (!resp.ok) {
    box.className = "face-read bad";
    box.textContent = errorText({ ok: false, status: resp.status, body });
    return;
  }
  const grid = el("span", { className: "face-grid" });
  [...body.stickers].forEach((c, i) => {
    const doubt = body.suspects.includes(i);
    grid.append(el("i", { className: doubt ? "doubt" : "", style: `background:${COLOURS[c]}`,
                          title: `${c} (${Math.round(100 * body.confidence[i])} %)` }));
  });
  box.className = "face-read done";
  box.dataset.stickers = body.stickers;
  box.append(grid, el("span", { textContent: body.ok ? " every sticker sure"
    : ` ${body.suspects.length} in doubt: retake it if a colour is wrong` }));
}

$("photos-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const form = new FormData($("photos-form"));
  say("photos-message", "reading the photos…");
  $("photos-read").disabled = true;
  let r;
  try {
    await faceReads; // the faces being read one by one first: the panel reads one upload at a time
    const resp = await fetch("/api/photos", { method: "POST", body: form });
    let body = {};
    try { body = await resp.json(); } catch { /* not JSON */ }
    r = { ok: resp.ok, status: resp.status, body };
  } catch (e) {
    r = { ok: false, status: 0, body: { error: { message: "the panel does not answer: " + e.message } } };
  } finally {
    $("photos-read").disabled = false;
  }
  const box = $("photos-result");
  box.textContent = "";
  if (!r.ok) { $("photos-cube").hidden = true; say("photos-message", errorText(r), true); return; }
  const d = r.body;
  // one short line; the stickers in doubt are listed (and ringed on the net) just under it
  say("photos-message", d.ok ? "read, every sticker sure" : d.valid ? "read, with stickers in doubt"
    : `not a valid cube: ${d.error ? d.error.message : ""}`, !d.ok);
  photo.facelets = d.facelets;
  photo.doubtful = new Set(d.suspects || []);
  photo.wrong = new Set(d.error && d.error.positions ? d.error.positions : []);
  photo.moves = "";
  $("photos-cube").hidden = false;
  $("photos-start").disabled = true;
  say("photos-solution", "");
  drawPhotoNet();
  box.append(el("p", { id: "photos-facelets", textContent: d.facelets }));
  if ((d.alternatives || []).length) box.append(alternativesList(d));
  for (const w of d.warnings || []) box.append(el("p", { className: "hint", textContent: "warning: " + w }));
  for (const f of d.pictures) box.append(el("img", { alt: "photo " + f, src: `/api/photos/${f}.jpg?t=${Date.now()}` }));
  showCube(d.facelets, d.suspects);
});

// The photos fit several cubes, depending on which way up they were taken: each is a button that puts it
// on the net (a person knows which way up each photo was taken; the photos alone do not say).
function alternativesList(d) {
  const all = [{ facelets: d.facelets, how: "as read" }, ...d.alternatives];
  const cubes = all.slice(0, 24); // the superflip fits 128: beyond a screenful, photos as drawn settle it
  const more = all.length > cubes.length ? ` (the first ${cubes.length} here; or take each photo as the net `
    + "draws its face)" : "";
  const list = el("div", { id: "photos-alternatives" },
    el("p", { textContent: `The photos fit ${all.length} cubes, depending on which way up they were taken: `
      + `choose the one that matches how you took them${more}` }));
  cubes.forEach((c, n) => {
    const b = el("button", { type: "button", textContent: `${n + 1}: ${n ? "if " + c.how : c.how}` });
    b.dataset.facelets = c.facelets;
    b.addEventListener("click", () => {
      photo.facelets = c.facelets;
      photo.doubtful = new Set();
      photo.wrong.clear();
      photo.moves = "";
      $("photos-start").disabled = true;
      say("photos-solution", "");
      say("photos-message", `cube ${n + 1} chosen`);
      $("photos-facelets").textContent = c.facelets;
      for (const o of list.querySelectorAll("button")) o.classList.toggle("chosen", o === b);
      drawPhotoNet();
      showCube(photo.facelets, []);
    });
    list.append(b);
  });
  return list;
}

// The cube the photos gave, as a net a person can correct (a tap cycles a sticker's colour), then
// Solve (the same solver and words as `cuberobot solve`) and Start: the solution turned on the virtual
// rig from that cube, followed by the cube and the progress at the top of the page.
const photo = { facelets: "", doubtful: new Set(), wrong: new Set(), moves: "" };
const photoNet = new Net($("photos-net"), (i) => {
  if (i % 9 === 4) return; // a centre names its face
  const now = photo.facelets[i];
  photo.facelets = photo.facelets.slice(0, i) + FACES[(FACES.indexOf(now) + 1) % 6] + photo.facelets.slice(i + 1);
  photo.wrong.clear();
  photo.moves = "";
  $("photos-start").disabled = true;
  say("photos-solution", "");
  drawPhotoNet();
  showCube(photo.facelets, [...photo.doubtful]);
});

function drawPhotoNet() {
  photoNet.show(photo.facelets, photo.doubtful, photo.wrong);
  showDoubt($("photos-doubt"), $("photos-doubt-list"), photo.facelets, photo.doubtful,
            (i) => photoNet.cells[i].click());
}

$("photos-solve").addEventListener("click", async () => {
  say("photos-solution", "solving…");
  const method = $("method").value;
  const r = await post("/api/solve", method === "cfop" ? { facelets: photo.facelets, method }
    : { facelets: photo.facelets, method, metric: $("metric").value });
  if (!r.ok) {
    const err = r.body.error || {};
    photo.wrong = new Set(err.positions || []);
    drawPhotoNet();
    say("photos-solution", errorText(r), true);
    return;
  }
  const b = r.body;
  photo.moves = b.moves;
  // as `cuberobot solve` prints it: CFOP stage by stage, the two-phase moves on one line
  const text = b.stages ? b.stages.map((st) => `${st.name}${st.slot ? ` (${st.slot})` : ""}: ${st.moves || "-"}` +
    (st.case ? ` [${st.case}]` : "")).join("\n") + `\n(${b.length} moves)` : `${b.moves} (${b.length} moves)`;
  say("photos-solution", b.length ? text : "already solved: no moves");
  $("photos-start").disabled = !b.length;
});

$("photos-start").addEventListener("click", async () => {
  const r = await post("/api/dry-run", { moves: photo.moves, start: photo.facelets, speed: 1 });
  if (!r.ok) { say("photos-solution", errorText(r), true); return; }
  say("photos-solution", `${photo.moves}: turning on the virtual rig… (see Dry run)`);
  showTool("dry-area"); // a dry run shows in its own card
});

// Bring a tool's card into view: on a phone its tab is opened (the others closed), on a wide screen,
// where every card shows, it is scrolled to.
function showTool(id) {
  const tab = document.querySelector(`#tool-tabs button[data-tab='${id}']`);
  if (tab && tab.offsetParent !== null) {
    if (tab.getAttribute("aria-expanded") !== "true") tab.click();
  } else $(id).scrollIntoView({ block: "start", behavior: "smooth" });
}

// ---------------------------------------------------------------- the last runs

$("runs-load").addEventListener("click", async () => {
  const r = await getJSON("/api/runs");
  const list = $("runs");
  list.textContent = "";
  if (!r.ok) { list.append(el("li", { textContent: errorText(r) })); return; }
  if (!r.body.runs.length) list.append(el("li", { textContent: "no runs recorded yet" }));
  for (const run of r.body.runs) {
    const when = (run.started || run.id).replace("T", " ");
    // a record without a status: the run ended before it could write one (an older record, or a
    // failure the run did not name); the reason, when recorded, follows
    let what = run.status || "did not start";
    if (run.status === "solved") what += ` in ${run.turns} turns, ${Number(run.total_s).toFixed(1)} s`;
    if (run.message) what += ": " + run.message;
    const details = el("details", {}, el("summary", { textContent: `${when} · ${what}` }));
    if (run.moves) details.append(el("p", { className: "hint", textContent: run.moves }));
    const pics = el("div", { className: "pics" });
    details.append(pics);
    details.addEventListener("toggle", () => {
      if (!details.open || pics.children.length) return;
      for (const name of run.pictures) {
        pics.append(el("img", { alt: `${run.id} ${name}`, loading: "lazy",
                                src: `/api/runs/${encodeURIComponent(run.id)}/${encodeURIComponent(name)}.png` }));
      }
    });
    list.append(el("li", {}, details));
  }
  $("runs-load").textContent = "Refresh";
});

// ---------------------------------------------------------------- the tabs (a phone)
// On a narrow screen the tools are closed until their tab is pressed, one open at a time (panel.css
// hides a .tool without .open there); on a wide screen every tool shows and the tabs are not drawn.

for (const tab of document.querySelectorAll("#tool-tabs button")) {
  tab.addEventListener("click", () => {
    const opening = tab.getAttribute("aria-expanded") !== "true";
    for (const other of document.querySelectorAll("#tool-tabs button")) {
      other.setAttribute("aria-expanded", String(opening && other === tab));
      $(other.dataset.tab).classList.toggle("open", opening && other === tab);
    }
    if (opening) $(tab.dataset.tab).scrollIntoView({ block: "start", behavior: "smooth" });
  });
}
