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

export class Cube3D {
  constructor(root, size) {
    this.root = root;
    this.size = size;
    this.rx = -28;
    this.ry = -38;
    this.facelets = SOLVED;
    this.queue = [];
    this.busy = false;
    root.style.setProperty("--size3d", size + "px");
    this.stickers = [];
    for (let i = 0; i < 54; i++) {
      const face = FACES[Math.floor(i / 9)], n = i % 9;
      const el = document.createElement("div");
      el.className = "sticker3d";
      el.dataset.face = face;
      el.dataset.index = i;
      el.appendChild(document.createElement("i"));
      root.appendChild(el);
      this.stickers.push({ el, face, pos: slot(face, Math.floor(n / 3), n % 3), normal: NORMALS[face] });
    }
    this.show(SOLVED);
    this.view();
  }

  view() {
    this.root.style.transform = `rotateX(${this.rx}deg) rotateY(${this.ry}deg)`;
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

  // Place sticker s, its layer turned by `turn` ([axis, angle] in model terms) if given.
  place(s, turn) {
    const S = this.size;
    let pos = s.pos.map((p, k) => (p + s.normal[k] * 0.5) * S);
    let n = s.normal;
    let m = null;
    if (turn) {
      m = rotation(turn[0], turn[1]);
      pos = apply(m, pos);
      n = apply(m, n);
    }
    // A frame (u, v, n) in CSS coordinates, right-handed so the sticker's front faces outwards.
    const nc = flip(n);
    const up = Math.abs(nc[1]) < 0.9 ? [0, 1, 0] : [0, 0, 1];
    let u = cross(up, nc);
    const len = Math.hypot(...u);
    u = u.map((x) => x / len);
    const v = cross(nc, u);
    const t = flip(pos);
    s.el.style.transform = `matrix3d(${u[0]},${u[1]},${u[2]},0,${v[0]},${v[1]},${v[2]},0,` +
      `${nc[0]},${nc[1]},${nc[2]},0,${t[0]},${t[1]},${t[2]},1)`;
  }

  // Show a cube state at once (facelets in URFDLB letters).
  show(facelets) {
    this.facelets = facelets;
    this.root.dataset.facelets = facelets;
    this.stickers.forEach((s, i) => {
      s.el.firstChild.style.background = COLOURS[facelets[i]] || "#555";
      this.place(s, null);
    });
  }

  // Animate `step` ("R", "U D'"), then show `after`. Turns queue up; a long queue skips to the end.
  turn(step, after, ms) {
    this.queue.push([step, after, ms]);
    if (this.queue.length > 3) {
      const last = this.queue.pop();
      this.queue = [];
      this.busy = false;
      this.show(last[1]);
      return;
    }
    if (!this.busy) this.next();
  }

  next() {
    const item = this.queue.shift();
    if (!item) { this.busy = false; return; }
    this.busy = true;
    const [step, after, ms] = item;
    const parts = step.split(/\s+/).filter(Boolean).map(parseTurn);
    const t0 = performance.now();
    const frame = (now) => {
      const k = Math.min(1, (now - t0) / ms);
      const ease = k < 0.5 ? 2 * k * k : 1 - Math.pow(-2 * k + 2, 2) / 2;
      for (const s of this.stickers) {
        const part = parts.find(([f]) => dot(s.pos, NORMALS[f]) > 0.5);
        // clockwise seen from outside the face: negative about its normal
        this.place(s, part ? [NORMALS[part[0]], -part[1] * ease * Math.PI / 2] : null);
      }
      if (k < 1) requestAnimationFrame(frame);
      else { this.show(after); this.next(); }
    };
    requestAnimationFrame(frame);
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
      b.setAttribute("aria-label", `${FACES[Math.floor(i / 9)]}${(i % 9) + 1}: ${COLOUR_NAMES[letter] || "?"}`);
      b.classList.toggle("doubt", doubtful.has(i));
      b.classList.toggle("wrong", wrong.has(i));
    });
  }
}
