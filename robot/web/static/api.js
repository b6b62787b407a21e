// The panel's two ways to call its API (docs/api.md), shared by every page
// module. Neither throws: a server that does not answer, or an answer that
// is not JSON, comes back as { ok: false, status, body: { error } } or an
// empty body, so that each caller shows a line instead of failing.

// POST a JSON body; keepalive, so that a Stop or an emergency stop sent as
// the page closes still goes out.
export async function post(path, body) {
  let r;
  try {
    r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                            body: JSON.stringify(body || {}), keepalive: true });
  } catch (e) {
    return { ok: false, status: 0, body: { error: { message: "the panel does not answer: " + e.message } } };
  }
  let data = {};
  try { data = await r.json(); } catch { /* an empty answer */ }
  return { ok: r.ok, status: r.status, body: data };
}

// GET, never from the browser's cache: the answers (live pictures, runs,
// geometry) change from one call to the next.
export async function getJSON(path) {
  try {
    const r = await fetch(path, { cache: "no-store" });
    let body = {};
    try { body = await r.json(); } catch { /* not JSON */ }
    return { ok: r.ok, status: r.status, body };
  } catch (e) {
    return { ok: false, status: 0, body: { error: { message: "the panel does not answer: " + e.message } } };
  }
}
