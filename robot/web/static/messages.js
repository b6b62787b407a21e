// Messages on a phone. The server's messages are written for a terminal: whole, with paths and the
// command to run next, often two or three sentences. On a narrow screen a long one is folded to its first
// sentence (what happened), with a "more" button that unfolds the rest (why, and what to do) on a tap;
// the CSS lets every message area wrap anywhere, a long path included, so nothing is wider than the phone.
//
// Each card writes its message as it always has (textContent); this module watches the message areas
// and folds what they are given, so the text stays the element's text (textContent is the whole message,
// folded or not: the button's label is drawn by the CSS) and no card needs to know about phones.

// (the Config card's override line and the Port card's kept port are not messages but what is in force,
// named with how to undo it: they wrap, whole)
const AREAS = ["message", "signin-message", "fix-message", "dry-message", "pocket-message", "geo-message",
               "photos-message", "jog-message", "host-message", "port-message"];
const LONG = 120;      // characters: shorter messages are shown whole
const NARROW = window.matchMedia("(max-width: 700px)");
const folded = new WeakMap();  // element -> the text it was folded from

// The end of the first sentence of a long text: its first ". " outside brackets (not "e.g. ", nor a
// path's dot), else its first "; ", after a few words; -1 when it has none worth folding at.
function firstSentenceEnd(text) {
  if (text.length <= LONG) return -1;
  for (const mark of [".", ";"]) {
    let depth = 0;
    for (let i = 20; i < text.length - 1; i++) {
      const c = text[i];
      if (c === "(" || c === "[") depth++;
      else if ((c === ")" || c === "]") && depth > 0) depth--;
      else if (c === mark && depth === 0 && /\s/.test(text[i + 1]) &&
               !/\b(e\.g|i\.e|etc|vs)$/i.test(text.slice(0, i))) {
        return text.length - i - 1 > 20 ? i + 1 : -1;  // a short tail is shown whole
      }
    }
  }
  return -1;
}

function fold(area) {
  const text = area.textContent;
  if (folded.get(area) === text) return;  // our own rewrite, seen by the observer
  folded.delete(area);
  const end = NARROW.matches ? firstSentenceEnd(text) : -1;
  if (end < 0 || area.children.length) return;  // short, wide, or a card that builds its own parts
  const rest = document.createElement("span");
  rest.className = "more-text";
  rest.textContent = text.slice(end);
  rest.hidden = true;
  const more = document.createElement("button");
  more.type = "button";
  more.className = "more";
  more.setAttribute("aria-expanded", "false");
  more.setAttribute("aria-label", "show the rest of the message");
  more.addEventListener("click", () => {
    rest.hidden = !rest.hidden;
    more.setAttribute("aria-expanded", rest.hidden ? "false" : "true");
  });
  folded.set(area, text);
  area.replaceChildren(text.slice(0, end), more, rest);
}

for (const id of AREAS) {
  const area = document.getElementById(id);
  if (!area) continue;
  new MutationObserver(() => fold(area)).observe(area, { childList: true, characterData: true, subtree: true });
  fold(area);
}
// turned from wide to narrow, or back: fold or unfold what is shown
NARROW.addEventListener("change", () => {
  for (const id of AREAS) {
    const area = document.getElementById(id);
    if (!area) continue;
    const text = area.textContent;
    if (folded.has(area)) { folded.delete(area); area.textContent = text; } else fold(area);
  }
});
