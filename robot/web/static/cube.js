// The cube for the panel: a 3-D model drawn with CSS 3D transforms (54
// stickers, each placed by a matrix), turned by dragging and animating each
// turn, and a flat net whose stickers can be tapped. No outside library.
// An ES module: the other modules import what they draw with.
export const FACES = "URFDLB";
export const COLOURS = { U: "#f5f5f5", R: "#d62828", F: "#2a9d3a", D: "#f2d22e", L: "#ff8c1a", B: "#1e5bc6" };
export const COLOUR_NAMES = { U: "white", R: "red", F: "green", D: "yellow", L: "orange", B: "blue" };
const NORMALS = { U: [0, 1, 0], R: [1, 0, 0], F: [0, 0, 1], D: [0, -1, 0], L: [-1, 0, 0], B: [0, 0, -1] };
export const SOLVED = FACES.split("").map((f) => f.repeat(9)).join("");

// Cubie position (-1..1, y up, F toward the viewer) of facelet (face, row, column), as the net lays it out.
function slot(face, r, c) {
  switch (face) {
    case "U": return [c - 1, 1, r - 1];
    case "R": return [1, 1 - r, 1 - c];
    case "F": return [c - 1, 1 - r, 1];
    case "D": return [c - 1, -1, 1 - r];
    case "L": return [-1, 1 - r, c - 1];
    default: return [1 - c, 1 - r, -1];
  }
}

// The cube's corner (a key such as "1,1,-1") at corner k of a face as the net draws it: 0 top-left,
// 1 top-right, 2 bottom-right, 3 bottom-left. Faces seen by one camera share corners: the geometry
// editor gives each shared corner one handle.
export function cornerOf(face, k) {
  const [r, c] = [[0, 0], [0, 2], [2, 2], [2, 0]][k];
  return slot(face, r, c).join(",");
}

const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const flip = (v) => [v[0], -v[1], v[2]]; // the model (y up) to CSS (y down)

// Rotation matrix (rows) about unit axis a by angle t (Rodrigues).
function rotation(a, t) {
  const [x, y, z] = a, c = Math.cos(t), s = Math.sin(t), k = 1 - c;
  return [[c + x * x * k, x * y * k - z * s, x * z * k + y * s],
          [y * x * k + z * s, c + y * y * k, y * z * k - x * s],
          [z * x * k - y * s, z * y * k + x * s, c + z * z * k]];
}
const apply = (m, v) => [dot(m[0], v), dot(m[1], v), dot(m[2], v)];

// "R2", "U'", "F" -> [face, quarter turns clockwise]
function parseTurn(token) {
  const face = token[0];
  const q = token.endsWith("2") ? 2 : token.endsWith("'") ? -1 : 1;
  return [face, q];
}

// The CSS matrix3d of a model-space rotation (rows): conjugated by the y flip, written column by column.
function cssRotation(m) {
  const c = [[m[0][0], -m[0][1], m[0][2]], [-m[1][0], m[1][1], -m[1][2]], [m[2][0], -m[2][1], m[2][2]]];
  return `matrix3d(${c[0][0]},${c[1][0]},${c[2][0]},0,${c[0][1]},${c[1][1]},${c[2][1]},0,` +
    `${c[0][2]},${c[1][2]},${c[2][2]},0,0,0,0,1)`;
}

// The CSS matrix3d placing a flat element (centred on the origin) at model point `pos` facing `normal`:
// a frame (u, v, n) in CSS coordinates, right-handed so that the element's front faces outwards.
function placement(pos, normal) {
  const nc = flip(normal);
  const up = Math.abs(nc[1]) < 0.9 ? [0, 1, 0] : [0, 0, 1];
  let u = cross(up, nc);
  const len = Math.hypot(...u);
  u = u.map((x) => x / len);
  const v = cross(nc, u);
  const t = flip(pos);
  return `matrix3d(${u[0]},${u[1]},${u[2]},0,${v[0]},${v[1]},${v[2]},0,` +
    `${nc[0]},${nc[1]},${nc[2]},0,${t[0]},${t[1]},${t[2]},1)`;
}

const key = (pos, normal) => [...pos, ...normal].map(Math.round).join(",");

// A quarter turn of a face, clockwise seen from outside it: a rotation of -90 degrees about its normal.
const quarter = (face, q) => rotation(NORMALS[face], -q * Math.PI / 2);

const multiply = (a, b) => a.map((row) => [0, 1, 2].map((j) => row[0] * b[0][j] + row[1] * b[1][j] + row[2] * b[2][j]));
export const HOME = "URFDLB";

// A rig that moves the cube (flipper, two-gripper) holds it in an orientation: the cube face in each of
// the rig's slots U R F D L B ("URFDLB": as it was put in). As a rotation (rows) taking the cube's own
// frame to the rig's: each face's normal onto the normal of the slot that holds it.
export function orientationMatrix(held) {
  const m = [[0, 0, 0], [0, 0, 0], [0, 0, 0]];
  for (const slotFace of "URF") {
    const to = NORMALS[slotFace], from = NORMALS[held[FACES.indexOf(slotFace)]];
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) m[r][c] += to[r] * from[c];
  }
  return m;
}

// The orientation a rotation draws: for each slot, the face whose normal it turns onto the slot's.
export function heldBy(m) {
  return FACES.split("").map((slotFace) => FACES.split("").find((f) =>
    dot(apply(m, NORMALS[f]), NORMALS[slotFace]) > 0.5)).join("");
}

// The cube model that turns. Its stickers never move between layers of the DOM at rest; during a turn
// the turning layer's stickers go into one element (a .layer3d) that is rotated as a whole, with a black
// cap closing its inner side and another closing the body's, so that the layer turns as a solid block
// (not 21 loose stickers) and the inside of the cube is never seen through the gap.
export class Cube3D {
  constructor(root, size) {
    this.root = root;
    this.size = size;
    this.rx = -28;
    this.ry = -38;
    this.facelets = SOLVED;
    this.anim = null; // the turn being drawn: { step, after, layers, caps }
    this.orient = orientationMatrix(HOME); // how the rig holds the cube (the cube's frame to the rig's)
    this.whole = null; // a whole-cube turn being drawn: { target }
    root.style.setProperty("--size3d", size + "px");
    this.stickers = [];
    const where = new Map();
    for (let i = 0; i < 54; i++) {
      const face = FACES[Math.floor(i / 9)], n = i % 9;
      const el = document.createElement("div");
      el.className = "sticker3d";
      el.dataset.face = face;
      el.dataset.index = i;
      el.appendChild(document.createElement("i"));
      root.appendChild(el);
      const s = { el, face, pos: slot(face, Math.floor(n / 3), n % 3), normal: NORMALS[face] };
      where.set(key(s.pos, s.normal), i);
      this.stickers.push(s);
    }
    // Where each sticker goes in a quarter turn of each face (the same geometry the drawing uses, so
    // the state drawn at the end of a turn is the one the turn's motion shows).
    this.moves = {};
    for (const f of FACES) {
      const m = quarter(f, 1);
      this.moves[f] = this.stickers.map((s, i) => dot(s.pos, NORMALS[f]) > 0.5
        ? where.get(key(apply(m, s.pos), apply(m, s.normal))) : i);
    }
    this.show(SOLVED);
    this.view();
  }

  view() {
    this.root.style.transform = `rotateX(${this.rx}deg) rotateY(${this.ry}deg) ${cssRotation(this.orient)}`;
  }

  // Hold the cube in orientation `held` at once (a whole-cube turn being drawn is dropped).
  hold(held) {
    if (!held || held.length !== 6) return;
    this.whole = null;
    this.orient = orientationMatrix(held);
    this.root.dataset.held = heldBy(this.orient); // read back off the drawn rotation, not copied
    delete this.root.dataset.rotating;
    this.view();
  }

  // The orientation the cube is drawn in, or is being turned to.
  holding() {
    return this.whole ? this.whole.target : heldBy(this.orient);
  }

  // Draw the whole cube turning `quarters` clockwise seen from outside rig slot `about`, over `ms`,
  // ending held as `target`; a layer turn being drawn is ended first.
  turnWhole(about, quarters, target, ms) {
    if (this.anim) this.show(this.anim.after);
    if (this.whole) this.hold(this.whole.target);
    const start = this.orient, whole = { target };
    this.whole = whole;
    this.root.dataset.rotating = `${about} ${quarters > 0 ? "+" : ""}${quarters}`;
    const t0 = performance.now();
    const frame = (now) => {
      if (this.whole !== whole) return;
      const k = Math.min(1, (now - t0) / ms);
      const ease = k < 0.5 ? 2 * k * k : 1 - Math.pow(-2 * k + 2, 2) / 2;
      if (k < 1) {
        this.orient = multiply(quarter(about, quarters * ease), start);
        this.view();
        requestAnimationFrame(frame);
      } else this.hold(target);
    };
    requestAnimationFrame(frame);
  }

  // The rig reported a move done, holding the cube as `held`: a turn drawn to there already ends there.
  settleHeld(held) {
    if (held && this.holding() !== held) this.hold(held);
  }

  // Drag anywhere on `area` to turn the view.
  draggable(area) {
    let last = null;
    area.addEventListener("pointerdown", (e) => { last = [e.clientX, e.clientY]; area.setPointerCapture(e.pointerId); });
    area.addEventListener("pointermove", (e) => {
      if (!last) return;
      this.ry += (e.clientX - last[0]) * 0.5;
      this.rx = Math.max(-89, Math.min(89, this.rx - (e.clientY - last[1]) * 0.5));
      last = [e.clientX, e.clientY];
      this.view();
    });
    const end = () => { last = null; };
    area.addEventListener("pointerup", end);
    area.addEventListener("pointercancel", end);
  }

  // Put sticker s in its place on the cube at rest.
  place(s) {
    s.el.style.transform = placement(s.pos.map((p, k) => (p + s.normal[k] * 0.5) * this.size), s.normal);
  }

  // The facelets after `step` ("R", "U2", "U D'") from `facelets`.
  after(facelets, step) {
    let out = facelets;
    for (const [face, q] of step.split(/\s+/).filter(Boolean).map(parseTurn)) {
      const move = this.moves[face];
      if (!move) return null; // not a face turn this model knows
      for (let k = 0; k < ((q % 4) + 4) % 4; k++) {
        const next = out.split("");
        move.forEach((to, from) => { next[to] = out[from]; });
        out = next.join("");
      }
    }
    return out;
  }

  // Show a cube state at once (facelets in URFDLB letters); a turn being drawn is dropped.
  show(facelets) {
    this.drop();
    this.facelets = facelets;
    this.root.dataset.facelets = facelets;
    this.stickers.forEach((s, i) => {
      s.el.firstChild.style.background = COLOURS[facelets[i]] || "#555";
      this.place(s);
    });
  }

  // Take the turning layers apart: their stickers back into the cube, the caps gone.
  drop() {
    const a = this.anim;
    if (!a) return;
    this.anim = null; // its next frame sees this and stops
    for (const layer of a.layers) {
      for (const el of [...layer.children]) if (el.classList.contains("sticker3d")) this.root.appendChild(el);
      layer.remove();
    }
    for (const cap of a.caps) cap.remove();
    delete this.root.dataset.turning;
  }

  // A black square closing the cube at the cut `pos` (model units), facing `normal`.
  cap(pos, normal) {
    const el = document.createElement("div");
    el.className = "cap3d";
    el.style.transform = placement(pos.map((p) => p * this.size), normal);
    return el;
  }

  // Draw `step` ("R", "U D'") being turned, over `ms`, from the state shown; the state it ends in is
  // shown at once when the next turn begins before this one is drawn to its end, so the cube is never
  // behind the turn the rig reports. Returns the state the turn ends in (null: not a turn drawn here).
  begin(step, ms) {
    if (this.anim) this.show(this.anim.after);
    if (this.whole) this.hold(this.whole.target);
    const after = this.after(this.facelets, step);
    if (after === null) return null;
    const parts = step.split(/\s+/).filter(Boolean).map(parseTurn);
    const layers = [], caps = [];
    for (const [face] of parts) {
      const n = NORMALS[face];
      const layer = document.createElement("div");
      layer.className = "layer3d";
      layer.dataset.face = face;
      for (const s of this.stickers) if (dot(s.pos, n) > 0.5) layer.appendChild(s.el);
      layer.appendChild(this.cap(n.map((x) => x * 0.5), n.map((x) => -x))); // the layer's inner side
      caps.push(this.cap(n.map((x) => x * 0.5), n)); // the body's side of the cut
      this.root.appendChild(layer);
      this.root.appendChild(caps[caps.length - 1]);
      layers.push(layer);
    }
    this.root.dataset.turning = step;
    this.root.dataset.target = after;
    const anim = { step, after, layers, caps };
    this.anim = anim;
    const t0 = performance.now();
    const frame = (now) => {
      if (this.anim !== anim) return;
      const k = Math.min(1, (now - t0) / ms);
      const ease = k < 0.5 ? 2 * k * k : 1 - Math.pow(-2 * k + 2, 2) / 2;
      parts.forEach(([face, q], j) => { layers[j].style.transform = cssRotation(quarter(face, q * ease)); });
      if (k < 1) requestAnimationFrame(frame);
      else this.show(after);
    };
    requestAnimationFrame(frame);
    return after;
  }

  // The rig reported a turn done, leaving `facelets`. The turn being drawn ends there already; anything
  // else (an event missed, a turn this model cannot draw) is put right by showing the rig's state.
  settle(facelets) {
    if (this.anim ? this.anim.after === facelets : this.facelets === facelets) return;
    this.show(facelets);
  }
}

// The net: U above F; L F R B in a row; D below F. Tapping calls onTap(index).
const NET_AT = { U: [0, 3], L: [3, 0], F: [3, 3], R: [3, 6], B: [3, 9], D: [6, 3] };

export class Net {
  constructor(root, onTap) {
    this.root = root;
    this.cells = [];
    for (let i = 0; i < 54; i++) {
      const face = FACES[Math.floor(i / 9)], n = i % 9;
      const [r0, c0] = NET_AT[face];
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.index = i;
      b.style.gridRow = String(r0 + Math.floor(n / 3) + 1);
      b.style.gridColumn = String(c0 + (n % 3) + 1);
      if (n === 4) b.classList.add("centre");
      b.addEventListener("click", () => onTap(i));
      root.appendChild(b);
      this.cells.push(b);
    }
  }

  show(facelets, doubtful, wrong) {
    this.cells.forEach((b, i) => {
      const letter = facelets[i];
      b.style.background = COLOURS[letter] || "#555";
      b.dataset.letter = letter;
      b.setAttribute("aria-label", `${stickerName(i)}: ${COLOUR_NAMES[letter] || "?"}`);
      b.classList.toggle("doubt", doubtful.has(i));
      b.classList.toggle("wrong", wrong.has(i));
    });
  }
}


// A sticker's name as the terminal writes it: its face and its number in the face, row by row ("F3").
export function stickerName(i) {
  return `${FACES[Math.floor(i / 9)]}${(i % 9) + 1}`;
}

// The stickers in doubt, first and few: one short sentence, and each sticker as a chip in its colour
// that taps it as the net would. A scan's long explanation stays out of the way.
export function showDoubt(sentence, list, facelets, doubtful, onTap) {
  const shown = [...doubtful].sort((a, b) => a - b);
  list.textContent = "";
  sentence.textContent = shown.length
    ? `${shown.length} sticker${shown.length > 1 ? "s" : ""} in doubt (ringed): tap ${shown.length > 1
      ? "each" : "it"} until it has the colour the cube shows.` : "";
  for (const i of shown) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.index = i;
    const swatch = document.createElement("i");
    swatch.style.background = COLOURS[facelets[i]] || "#555";
    b.append(swatch, stickerName(i));
    b.addEventListener("click", () => onTap(i));
    list.appendChild(b);
  }
  list.hidden = !shown.length;
}
