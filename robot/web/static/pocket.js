// The page's 2x2 section: a typed 24-sticker cube drawn as a net, checked and
// solved optimally by the API (POST /api/solve; a bad cube's stickers ringed).
import { post } from "./api.js";
import { COLOURS } from "./cube.js";

const $ = (id) => document.getElementById(id);
// Where each face sits in the net, in 2x2 cells: U above F; L F R B across; D below F.
const PLACE = { U: [0, 1], R: [1, 2], F: [1, 1], D: [2, 1], L: [1, 0], B: [1, 3] };

function draw(stickers, wrong) {
  const box = $("pocket-net");
  box.textContent = "";
  "URFDLB".split("").forEach((face, f) => {
    const [row, col] = PLACE[face];
    for (let k = 0; k < 4; k++) {
      const i = 4 * f + k;
      const cell = document.createElement("i");
      cell.style.gridRow = String(2 * row + (k >> 1) + 1);
      cell.style.gridColumn = String(2 * col + (k & 1) + 1);
      cell.style.background = COLOURS[stickers[i]] || "#444";
      cell.dataset.index = String(i);
      cell.dataset.letter = stickers[i] || "";
      cell.title = stickers[i] || "?";
      if (wrong.has(i)) cell.classList.add("wrong");
      box.appendChild(cell);
    }
  });
}

async function solve() {
  const text = $("pocket-cube").value.replace(/\s+/g, "");
  $("pocket-message").classList.remove("error");
  $("pocket-message").textContent = "solving…";
  const r = await post("/api/solve", { facelets: text, size: 2, metric: $("pocket-metric").value });
  if (!r.ok) {
    const err = r.body.error || {};
    draw(text, new Set(err.positions || []));
    $("pocket-message").textContent = err.message || "refused (" + r.status + ")";
    $("pocket-message").classList.add("error");
    return;
  }
  const b = r.body;
  draw(b.facelets, new Set());
  $("pocket-message").textContent = b.length
    ? `optimal in ${b.metric}: ${b.moves} (${b.length} moves, ${b.elapsed_ms.toFixed(1)} ms)`
    : "already solved: no moves";
}

$("pocket-solve").addEventListener("click", solve);
draw("UUUURRRRFFFFDDDDLLLLBBBB", new Set());
