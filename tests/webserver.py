"""A real panel server (uvicorn on a free loopback port, in a thread) for
the API and browser tests, and a small HTTP client that can send any
header (a foreign Host or Origin) and read the event stream."""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import struct
import threading
import time
import urllib.parse
import zlib
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from robot.rig.loading import load_config
from robot.sim.protocol_sim import forget, rig_for_url, sim_url
from robot.web.runs import Options
from robot.web.server import Served, bind, make_server
from vision.render import Lighting

_n = 0

SCREENSHOTS = bool(os.environ.get("CUBEROBOT_SCREENSHOTS"))
"""A run that retakes docs/images (tests/chromium.py's shot): the pictures must show no test's name and
no temporary folder, so the panel works in a neutral folder of its own then (see :func:`shown`)."""
_workshop: Path | None = None

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


def shown(folder) -> str:
    """A folder for the panel's options: in a screenshot run, its name in the neutral folder the panel
    works in (a link there to ``folder``), so that a message naming a file in it says
    ``profiles/page.json``, not a temporary path with the test's name; else the folder as given."""
    if _workshop is None:
        return str(folder)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (_workshop / folder.name).symlink_to(folder)
    return folder.name


@contextmanager
def panel_server(state_dir, **kw):
    """Yields (base url, panel, rig url): see :func:`_panel_server`. In a
    screenshot run the server works in a neutral folder of its own, its state
    folder a link there named ``state`` (see :func:`shown`)."""
    global _workshop
    if not SCREENSHOTS:
        with _panel_server(state_dir, **kw) as served:
            yield served
        return
    import shutil
    import tempfile

    here, _workshop = os.getcwd(), Path(tempfile.mkdtemp(prefix="cuberobot-panel-"))
    Path(state_dir).mkdir(parents=True, exist_ok=True)
    (_workshop / "state").symlink_to(Path(state_dir).resolve())
    # the set-up file as a maker in the checkout names it: config/rig.toml, not this checkout's full path
    root = Path(__file__).resolve().parents[1]
    (_workshop / "config").symlink_to(root / "config")
    cfg = kw.get("cfg") or load_config()
    if cfg.path is not None and Path(cfg.path).resolve().is_relative_to(root / "config"):
        kw["cfg"] = replace(cfg, path=Path(cfg.path).resolve().relative_to(root))
    os.chdir(_workshop)
    try:
        with _panel_server("state", **kw) as served:
            yield served
    finally:
        os.chdir(here)
        shutil.rmtree(_workshop)  # the links, not what they lead to
        _workshop = None


@contextmanager
def _panel_server(state_dir, *, speed="8", token=None, sim_lighting=steady_light, cfg=None, firmware=None,
                 firmware_speed="1", host="127.0.0.1", body_grace_s=None, rig_port=None, limits=None,
                 as_served=False):
    """Yields (base url, panel, rig url); the simulated rig is fresh (with
    ``firmware``, the real firmware in simavr, kept for the server's life;
    with ``rig_port``, the rig behind that port, a sim-rig's pty say; with
    ``as_served``, the one ``cfg`` names, and the settings kept in the user's
    config folder, as `cuberobot serve` has them)."""
    global _n
    _n += 1
    # a neutral name in the pictures (the issue 48 maker saw sim://web-4-...)
    rig_url = sim_url(f"rig{_n}" if SCREENSHOTS else f"web-{_n}-{time.monotonic_ns()}", speed=speed)
    served = bind(host, 0)
    if token is not None:
        served = Served(served.sock, served.url, served.hosts, token)
    options = Options(rig_port=None if firmware or as_served else rig_port or rig_url,
                      state_dir=str(state_dir),
                      sim_lighting=sim_lighting, firmware=firmware, firmware_speed=firmware_speed,
                      settings_dir=None if as_served else str(Path(state_dir) / "settings"))
    server, panel = make_server(cfg or load_config(), options, served, body_grace_s=body_grace_s,
                                limits=limits)
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


class ServerLog(logging.Handler):
    """What an in-process server logs (uvicorn's loggers and the panel's),
    and any exception a thread ends with: the hostile tests count the
    tracebacks and the errors."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.thread_errors: list[str] = []

    def emit(self, record):
        self.records.append(record)

    def tracebacks(self):
        out = [f"{r.name}: {r.getMessage()}" for r in self.records
               if r.exc_info or "Traceback" in r.getMessage() or r.levelno >= logging.ERROR]
        return out + self.thread_errors


@contextmanager
def server_log():
    """Catch the server's log records while the block runs (attach after the
    server is made: uvicorn sets its loggers up when it is configured)."""
    catcher = ServerLog()
    loggers = [logging.getLogger(), logging.getLogger("uvicorn"), logging.getLogger("uvicorn.error")]
    for lg in loggers:
        lg.addHandler(catcher)
    old_hook = threading.excepthook

    def hook(args):
        catcher.thread_errors.append(f"{args.thread.name if args.thread else '?'}: {args.exc_type.__name__}: "
                                     f"{args.exc_value}")
        old_hook(args)

    threading.excepthook = hook
    try:
        yield catcher
    finally:
        threading.excepthook = old_hook
        for lg in loggers:
            lg.removeHandler(catcher)


def raw_exchange(base, data, *, close_early=False, pause=0.0, timeout=10.0):
    """Send ``data`` (a whole HTTP request, or part of one) over a fresh
    socket; with ``close_early`` close the socket at once (a client that
    leaves mid-body), else read the answer: (status, JSON body or bytes),
    or (None, b"") when the server closed without answering."""
    u = urllib.parse.urlsplit(base)
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as sock:
        sock.sendall(data)
        if close_early:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # an abrupt reset
            return None, b""
        if pause:
            time.sleep(pause)
        return read_answer(sock)


def read_answer(sock):
    """(status, body) of one HTTP/1.1 answer on ``sock`` (Content-Length
    framed, as the panel's are), or (None, b"") if the socket closes first."""
    got = b""
    try:
        while b"\r\n\r\n" not in got:
            chunk = sock.recv(65536)
            if not chunk:
                return None, b""
            got += chunk
        head, _, body = got.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    except (TimeoutError, ConnectionError):
        return None, b""
    if headers.get("content-type", "").startswith("application/json"):
        return status, json.loads(body)
    return status, body


# ---------------------------------------------------------------- image bombs
# Small files that claim (and, where it is cheap, really hold) gigantic
# pictures, one per format this build of OpenCV decodes: the photo upload
# must refuse each before decoding it.

def _tiff_bomb(width=30000, height=30000, rows_per_strip=100):
    """A TIFF whose strips all point at one deflated strip of zeros (as the
    issue's 9.5 KB one): decoded, width x height x 3 bytes."""
    strip = zlib.compress(bytes(width * 3 * rows_per_strip), 9)
    strips = -(-height // rows_per_strip)
    entries = [(256, 4, 1, width), (257, 4, 1, height), (258, 3, 3, None), (259, 3, 1, 8), (262, 3, 1, 2),
               (273, 4, strips, None), (277, 3, 1, 3), (278, 4, 1, rows_per_strip), (279, 4, strips, None),
               (284, 3, 1, 1)]
    ifd_size = 2 + 12 * len(entries) + 4
    bits_at = 8 + ifd_size
    offsets_at = bits_at + 6
    counts_at = offsets_at + 4 * strips
    data_at = counts_at + 4 * strips
    extra = {258: bits_at, 273: offsets_at, 279: counts_at}
    ifd = struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        if value is None:
            value = extra[tag]
        field = struct.pack("<HH", value, 0) if kind == 3 and count == 1 else struct.pack("<I", value)
        ifd += struct.pack("<HHI", tag, kind, count) + field
    ifd += struct.pack("<I", 0)
    body = (struct.pack("<3H", 8, 8, 8) + struct.pack(f"<{strips}I", *[data_at] * strips)
            + struct.pack(f"<{strips}I", *[len(strip)] * strips))
    return b"II*\x00" + struct.pack("<I", 8) + ifd + body + strip


def png_bomb(width=12000, height=12000):
    """A real PNG of zeros: about 1/1000 of width x height x 3 bytes on disk."""
    c = zlib.compressobj(9)
    row = bytes(width * 3 + 1)
    rows = 10
    data = b"".join(c.compress(row * rows) for _ in range(height // rows)) + c.compress(row * (height % rows))
    data += c.flush()

    def chunk(kind, payload):
        crc = struct.pack(">I", zlib.crc32(kind + payload))
        return struct.pack(">I", len(payload)) + kind + payload + crc

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def bmp_bomb(width=30000, height=30000):
    """An RLE8 BMP that ends at once: the decoder fills every pixel itself."""
    palette = bytes(1024)
    rle = b"\x00\x01"
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 1, len(rle), 2835, 2835, 256, 0)
    offset = 14 + len(info) + len(palette)
    return b"BM" + struct.pack("<IHHI", offset + len(rle), 0, 0, offset) + info + palette + rle


def _gif_bomb(width=30000, height=30000):
    """A GIF whose one frame is width x height: a clear code and the end."""
    screen = struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x02\x01\x2c\x00"
    return b"GIF89a" + screen + frame + b"\x3b"


def _sof_patched(jpeg, width, height):
    """A real JPEG with its frame header claiming ``width`` x ``height``."""
    data = bytearray(jpeg)
    i = 2
    while i < len(data):
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC2):
            data[i + 5:i + 9] = struct.pack(">HH", height, width)
            return bytes(data)
        i += 2 + length
    raise AssertionError("no frame header")


def image_bombs(png=(12000, 12000)):
    """{format: file bytes}: one bomb for every format OpenCV reads here."""
    import cv2
    import numpy as np

    small = (np.random.default_rng(0).random((256, 256, 3)) * 255).astype(np.uint8)
    progressive = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
    vp8l = struct.pack("<I", (16383) | (16383 << 14))  # 16384 x 16384, the format's largest
    webp_body = b"VP8L" + struct.pack("<I", 5 + 16) + b"\x2f" + vp8l + bytes(16)
    bombs = {
        "PNG": png_bomb(*png),
        "JPEG": _sof_patched(progressive, 30000, 30000),
        "WebP": b"RIFF" + struct.pack("<I", 4 + len(webp_body)) + b"WEBP" + webp_body,
        "BMP": bmp_bomb(),
        "TIFF": _tiff_bomb(),
        "GIF": _gif_bomb(),
        "AVIF": cv2.imencode(".avif", small)[1].tobytes(),
        "JPEG 2000": cv2.imencode(".jp2", small)[1].tobytes(),
        "HDR": b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 30000 +X 30000\n" + bytes(64),
        "PNM": b"P6\n30000 30000\n255\n" + bytes(64),
        "PFM": b"PF\n30000 30000\n-1.0\n" + bytes(64),
        "Sun raster": struct.pack(">8I", 0x59A66A95, 30000, 30000, 24, 0, 1, 0, 0) + bytes(64),
    }
    return bombs


def multipart(files, boundary="cuberobotboundary"):
    """(headers, body) of a form with one file field per face."""
    out = b""
    for face, data in files.items():
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{face}\"; "
                f"filename=\"{face}.img\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
        out += data + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return {"Content-Type": f"multipart/form-data; boundary={boundary}"}, out


__all__ = ["Client", "ServerLog", "image_bombs", "multipart", "panel_server", "raw_exchange", "read_answer",
           "rig_for_url", "server_log"]
