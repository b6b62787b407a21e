"""A real panel server (uvicorn on a free loopback port, in a thread) for
the API and browser tests, and a small HTTP client that can send any
header (a foreign Host or Origin) and read the event stream."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from contextlib import contextmanager
from dataclasses import replace

from robot.rig.config import load_config
from robot.sim.protocol_sim import forget, rig_for_url, sim_url
from robot.web.panel import Options
from robot.web.server import Served, bind, make_server
from vision.render import Lighting

_n = 0

NO_LOOK_AGAIN = load_config()
NO_LOOK_AGAIN = replace(NO_LOOK_AGAIN, start=replace(NO_LOOK_AGAIN.start, look_again=0))
"""The default set-up with a doubtful scan going straight to the person (the
tests of the fix-a-sticker screen)."""


def steady_light(capture: int) -> Lighting:
    """Simulated cameras under one clear lamp for every capture. The panel's
    tests are about the page, not the vision: with the simulator's varied
    light about one start in a hundred ends with a person asked, and a test
    waiting for "solved" would hang (the vision is tested under varied light
    in test_start.py, with seeds, and in benchmarks/start.py)."""
    return Lighting(kelvin=5000, intensity=1.0, noise=1.5)


@contextmanager
def panel_server(state_dir, *, speed="8", token=None, sim_lighting=steady_light, cfg=None, firmware=None,
                 firmware_speed="1"):
    """Yields (base url, panel, rig url); the simulated rig is fresh (with
    ``firmware``, the real firmware in simavr, kept for the server's life)."""
    global _n
    _n += 1
    rig_url = sim_url(f"web-{_n}-{time.monotonic_ns()}", speed=speed)
    served = bind("127.0.0.1", 0)
    if token is not None:
        served = Served(served.sock, served.url, served.hosts, token)
    options = Options(rig_port=None if firmware else rig_url, state_dir=str(state_dir),
                      sim_lighting=sim_lighting, firmware=firmware, firmware_speed=firmware_speed)
    server, panel = make_server(cfg or load_config(), options, served)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [served.sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the panel did not start"
        time.sleep(0.02)
    base = served.url.split("?")[0]
    try:
        yield base, panel, rig_url
    finally:
        if panel.running():
            panel.stop()
        server.should_exit = True
        thread.join(timeout=20)
        forget(rig_url)


class Client:
    """HTTP/1.1 requests to the panel with full control of the headers."""

    def __init__(self, base: str):
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname, u.port
        self.netloc = u.netloc

    def request(self, method, path, body=None, headers=None, raw=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        h = {"Host": self.netloc}
        if body is not None:
            raw = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            conn.putheader(k, v)
        if raw is not None and "Transfer-Encoding" not in h:
            conn.putheader("Content-Length", str(len(raw)))
        conn.endheaders()
        if raw is not None:
            if h.get("Transfer-Encoding") == "chunked":
                for i in range(0, len(raw), 4096):
                    part = raw[i:i + 4096]
                    conn.send(f"{len(part):x}\r\n".encode() + part + b"\r\n")
                conn.send(b"0\r\n\r\n")
            else:
                conn.send(raw)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        ctype = r.getheader("content-type", "")
        return r.status, (json.loads(data) if ctype.startswith("application/json") else data), r

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        if body is None and "raw" not in kw:
            body = {}
        return self.request("POST", path, body=body, **kw)

    def events(self, stop, timeout=60):
        """Read the event stream until ``stop(event)`` is true; all events read."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.request("GET", "/api/events", headers={"Host": self.netloc})
        r = conn.getresponse()
        assert r.status == 200 and r.getheader("content-type").startswith("text/event-stream")
        got = []
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                line = r.fp.readline().decode()
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    event["received"] = time.time()
                    got.append(event)
                    if stop(event):
                        return got
            raise AssertionError(f"the stream did not reach the end: {[e.get('kind') for e in got]}")
        finally:
            conn.close()

    def wait_state(self, *states, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, body, _ = self.get("/api/status")
            if body["state"] in states:
                return body
            time.sleep(0.05)
        raise AssertionError(f"state {body['state']}, not {states}")


__all__ = ["Client", "panel_server", "rig_for_url"]
