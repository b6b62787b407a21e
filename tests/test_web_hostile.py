"""The panel against a hostile client (issue 21): image bombs of every
format OpenCV reads, JSON that is too deep, numbers too long, lone
surrogates, too many query fields, clients that leave mid-body or dribble
it, links planted in the runs folder, crossed corners, loopback addresses.
Every answer is a 4xx with a JSON body, and the server logs no traceback."""

import json
import os
import resource
import select
import socket
import subprocess
import sys
import time
import urllib.parse

import pytest
from webserver import Client, image_bombs, multipart, panel_server, raw_exchange, read_answer, server_log

from robot.web.server import bind

DEEP = b"[" * 16000 + b"]" * 16000
HUGE = "9" * 400


@pytest.fixture(scope="module")
def bombs():
    return image_bombs()


@pytest.fixture(scope="module")
def photo():
    """A small real JPEG to fill the other faces of a form."""
    import cv2
    import numpy as np

    img = (np.random.default_rng(1).random((240, 320, 3)) * 255).astype(np.uint8)
    return cv2.imencode(".jpg", img)[1].tobytes()


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_image_bombs_are_refused_from_their_header(client, bombs, photo):
    """Each bomb alone (as the U photo, the first read): 422 naming the photo
    and saying why from the header alone, at once, and this process (the
    server's) grows by nothing like a decoded bomb (the smallest, the PNG,
    is 432 MB decoded; the TIFF 2.7 GB; decoding the TIFF took 22 s)."""
    with server_log() as log:
        before = _peak_mb()
        for kind, bomb in bombs.items():
            headers, body = multipart({"U": bomb, **{f: photo for f in "RFDLB"}})
            t0 = time.monotonic()
            status, answer, _ = client.post("/api/photos", raw=body, headers=headers)
            took = time.monotonic() - t0
            message = answer["error"]["message"]
            assert status == 422 and message.startswith("the U photo: "), (kind, answer)
            assert "pixels is too big (at most" in message or "are not read here" in message, (kind, message)
            assert "\n" not in message and "give a" in message or "resize it" in message, message
            assert took < 3, (kind, took)
        grown = _peak_mb() - before
    assert grown < 150, f"the server process's peak grew {grown:.0f} MB"
    assert not log.tracebacks()


def test_six_bombs_at_once(client, bombs):
    """Six bombs in one form, and six such forms at once: all refused (422,
    or 429 for uploads beyond the two taken in at a time), none decoded."""
    from concurrent.futures import ThreadPoolExecutor

    kinds = ["TIFF", "BMP", "GIF", "JPEG", "PNG", "WebP"]
    headers, body = multipart(dict(zip("URFDLB", (bombs[k] for k in kinds))))
    before = _peak_mb()
    with server_log() as log, ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: client.post("/api/photos", raw=body, headers=headers), range(6)))
    statuses = sorted(status for status, _, _ in answers)
    assert set(statuses) <= {422, 429} and 422 in statuses, statuses
    for _, answer, _ in answers:
        assert answer["error"]["message"], answer
    assert _peak_mb() - before < 150
    assert not log.tracebacks()


def test_opencv_is_capped_in_the_server_process():
    """The second net: importing the server sets OpenCV's own pixel cap
    before OpenCV loads, so even a decoder asked directly refuses a picture
    over 64 megapixels (a real 8001x8000 PNG), and still reads a small one."""
    code = """if True:
        import os, sys
        sys.path.insert(0, "tests")
        os.environ.pop("OPENCV_IO_MAX_IMAGE_PIXELS", None)
        import robot.web.server
        from webserver import png_bomb
        import cv2, numpy as np
        try:
            big = cv2.imdecode(np.frombuffer(png_bomb(8001, 8000), np.uint8), cv2.IMREAD_COLOR)
        except cv2.error:
            big = "refused"
        small = cv2.imdecode(np.frombuffer(png_bomb(300, 200), np.uint8), cv2.IMREAD_COLOR)
        print(big if isinstance(big, str) else big.shape, small.shape)
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120)
    assert r.stdout.split(maxsplit=1) == ["refused", "(200, 300, 3)\n"], r.stdout + r.stderr


@pytest.mark.parametrize("path, field", [("/api/solve", "max_length"), ("/api/solve", "budget_ms"),
                                         ("/api/solve", "size"), ("/api/check", "size"),
                                         ("/api/start", "seed"), ("/api/scan", "seed"),
                                         ("/api/dry-run", "speed"), ("/api/jog", "turns"),
                                         ("/api/jog", "steps")])
def test_huge_numbers_are_400(client, path, field):
    # each route sent only fields it takes: an unknown one would be refused first, for the wrong reason
    others = {"/api/solve": '"facelets": "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB", ',
              "/api/check": '"facelets": "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB", ',
              "/api/dry-run": '"moves": "R", ', "/api/jog": '"face": "U", '}.get(path, "")
    for text in (HUGE, "-" + HUGE, HUGE + ".5", "1e999", "1" + "0" * 30):
        raw = f'{{{others}"{field}": {text}}}'.encode()
        status, answer, _ = client.post(path, raw=raw, headers={"Content-Type": "application/json"})
        message = answer["error"]["message"]
        assert status == 400 and message and "unknown field" not in message, (text, answer)


@pytest.mark.parametrize("path, body, words", [
    ("/api/jog", {"face": "U", "turn": -1}, "unknown field 'turn': did you mean 'turns'?"),
    ("/api/solve", {"facelets": "solved", "max_lenght": 5}, "did you mean 'max_length'?"),
    ("/api/dry-run", {"moves": "R", "sped": 0.5}, "did you mean 'speed'?"),
    ("/api/start", {"sede": 5}, "did you mean 'seed'?"),
    ("/api/check", {"facelets": "x", "x": 1}, "unknown field 'x': /api/check takes facelets, size"),
    ("/api/stop", {"now": True}, "/api/stop takes no fields"),
])
def test_a_field_the_route_does_not_take_is_named_not_dropped(client, path, body, words):
    status, answer, _ = client.post(path, body)
    message = answer["error"]["message"]
    assert status == 400 and words in message and "\n" not in message, answer


@pytest.mark.parametrize("raw, words", [(b"null", "not null"), (b"[]", "not an array"),
                                        (b'"x"', "not a string"),
                                        (b'{"facelets": null}', "'facelets' must be a string, not null"),
                                        (b'{"facelets": 3}', "'facelets' must be a string, not a number"),
                                        (b'{"seed": -1}', "from 0 to 4294967295")])
def test_wrong_kinds_are_named_in_jsons_words(client, raw, words):
    path = "/api/start" if b"seed" in raw else "/api/check"
    status, answer, _ = client.post(path, raw=raw, headers={"Content-Type": "application/json"})
    assert status == 400 and words in answer["error"]["message"], answer


def test_deep_json_and_surrogates_are_400_everywhere(client):
    posts = ["/api/check", "/api/solve", "/api/start", "/api/scan", "/api/stop", "/api/estop/clear",
             "/api/answer", "/api/calibrate", "/api/geometry", "/api/dry-run", "/api/jog"]
    with server_log() as log:
        for path in posts:
            for raw in (DEEP, b'{"a": ' + b"{" * 5000 + b"}" * 5000 + b"}", b'{"x": [' * 20 + b"]}" * 20):
                status, answer, _ = client.post(path, raw=raw, headers={"Content-Type": "application/json"})
                assert status in (400, 413), (path, answer)
                assert answer["error"]["kind"] in ("bad-json", "too-large"), (path, answer)
        status, answer, _ = client.post("/api/geometry", raw=b'{"views": {"\\ud800": {"U": []}}}')
        assert status == 400 and "surrogate" in answer["error"]["message"]
        status, answer, _ = client.post("/api/check", raw=b'{"facelets": "UUU\\udfffUUU"}')
        assert status == 400 and "surrogate" in answer["error"]["message"]
        status, answer, _ = client.post("/api/check", raw=b'{"facelets": "\\ud83d\\ude00"}')  # a real pair
        assert status == 422, answer
    assert not log.tracebacks()


def test_crossed_corners_are_422_naming_the_view(tmp_path):
    with panel_server(tmp_path / "state") as (base, panel, _):
        c = Client(base)
        _, geometry, _ = c.get("/api/geometry")
        view = geometry["views"][0]
        face = view["faces"][0]
        a, b, cc, d = face["corners"]
        dart = [(a[0] + b[0] + d[0]) / 3, (a[1] + b[1] + d[1]) / 3]  # inside: the outline folds in
        for corners in ([a, cc, b, d], [a, b, d, cc], [a, b, dart, d]):
            status, answer, _ = c.post("/api/geometry", {"views": {view["name"]: {face["face"]: corners}}})
            assert status == 422 and view["name"] in answer["error"]["message"], (corners, answer)
            assert "convex" in answer["error"]["message"]
        status, answer, _ = c.post("/api/geometry", {"views": {view["name"]: {face["face"]: [a, b, cc, d]}}})
        assert status == 200, answer


def test_too_many_query_fields_on_the_token_address(tmp_path):
    with panel_server(tmp_path / "state", token="secret-token") as (base, _, _):
        c = Client(base)
        query = "&".join(f"f{i}=x" for i in range(40))
        with server_log() as log:
            status, answer, _ = c.get(f"/?token=secret-token&{query}")
            assert status == 400 and "query fields" in answer["error"]["message"], answer
            netloc = urllib.parse.urlsplit(base).netloc
            raw = f"GET /?token=%ff%fe&x=%C0%80 HTTP/1.1\r\nHost: {netloc}\r\n\r\n".encode("latin-1")
            status, answer = raw_exchange(base, raw)
            assert status == 303, answer  # a token that is no token: to the sign-in screen
            status, _, r = c.get("/?token=secret-token")
            assert status == 303 and "cuberobot_token" in r.getheader("set-cookie")
        assert not log.tracebacks()


def test_a_client_leaving_mid_body_is_a_quiet_line(client, served, photo):
    """Cut off (a reset) or half-closed (the end of the request early, the
    answer still read): no traceback, at most a 400, and the server goes on."""
    base = served[0]
    u = urllib.parse.urlsplit(base)
    headers, body = multipart({f: photo for f in "URFDLB"})
    with server_log() as log:
        for path, data, ctype in (("/api/check", b'{"facelets": "UUUU', "application/json"),
                                  ("/api/photos", body[:len(body) // 2], headers["Content-Type"]),
                                  ("/api/geometry", b'{"views":', "application/json")):
            head = (f"POST {path} HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Type: {ctype}\r\n"
                    f"Content-Length: {len(data) + 1000}\r\n\r\n").encode()
            raw_exchange(base, head + data, close_early=True)
            with socket.create_connection((u.hostname, u.port), timeout=10) as sock:
                sock.sendall(head + data)
                sock.shutdown(socket.SHUT_WR)
                status, _ = read_answer(sock)
                assert status in (None, 400), status
        time.sleep(0.3)
        status, _, _ = client.get("/api/status")
        assert status == 200
    assert not log.tracebacks(), log.tracebacks()


def test_a_dribbled_body_is_dropped(tmp_path):
    """A body that comes slower than the floor rate (after the grace, here
    0.5 s instead of 10) gets 408 and the connection is closed."""
    with panel_server(tmp_path / "state", body_grace_s=0.5) as (base, _, _):
        u = urllib.parse.urlsplit(base)
        with server_log() as log, socket.create_connection((u.hostname, u.port), timeout=10) as sock:
            sock.sendall(f"POST /api/check HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Type: application/json\r\n"
                         "Content-Length: 1000\r\n\r\n".encode())
            t0 = time.monotonic()
            for _ in range(40):  # a byte every 0.2 s: 5 bytes a second
                sock.sendall(b" ")
                if select.select([sock], [], [], 0.2)[0]:
                    break
            status, answer = read_answer(sock)
            took = time.monotonic() - t0
            assert status == 408 and answer["error"]["kind"] == "too-slow", status
            assert took < 3
            sock.settimeout(2)
            assert sock.recv(100) == b""  # closed by the server
        assert not log.tracebacks()
        status, _, _ = Client(base).post("/api/check", {"facelets": "x"})  # an ordinary body still goes
        assert status == 422


def test_any_loopback_address_serves_itself(tmp_path):
    served = bind("127.0.0.2", 0)
    try:
        assert served.url.startswith("http://127.0.0.2:") and served.token is None
    finally:
        served.sock.close()
    with panel_server(tmp_path / "state", host="127.0.0.2") as (base, _, _):
        assert base.startswith("http://127.0.0.2:")
        status, body, _ = Client(base).get("/api/status")
        assert status == 200, body


def _run(folder, record=None):
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps(record or {"status": "solved", "moves": "R"}))
    (folder / "scan-upper.png").write_bytes(b"\x89PNG real")
    return folder


def test_links_in_runs_are_not_followed(tmp_path):
    state = tmp_path / "state"
    runs = state / "runs"
    outside = _run(tmp_path / "outside" / "20260101-000000", {"status": "secret"})
    (tmp_path / "secret.png").write_bytes(b"\x89PNG secret")
    _run(runs / "20260102-000000")
    os.symlink(outside, runs / "20260103-000000")  # a run folder that is a link out
    linked = runs / "20260104-000000"
    linked.mkdir()
    os.symlink(outside / "run.json", linked / "run.json")  # a record that is a link
    os.symlink(tmp_path / "secret.png", runs / "20260102-000000" / "scan-lower.png")  # a picture that is one
    fifo = runs / "20260105-000000"
    fifo.mkdir()
    os.mkfifo(fifo / "run.json")  # a record that would block a reader
    _run(runs / "20260106-000000")
    (runs / "20260106-000000" / "run.json").write_bytes(b'{"status": "' + b"x" * (2 << 20) + b'"}')
    with panel_server(state) as (base, _, _):
        c = Client(base)
        t0 = time.monotonic()
        status, body, _ = c.get("/api/runs")
        assert time.monotonic() - t0 < 5
        assert status == 200 and [r["id"] for r in body["runs"]] == ["20260102-000000"], body
        assert body["runs"][0]["pictures"] == ["scan-upper"]
        status, data, _ = c.get("/api/runs/20260102-000000/scan-upper.png")
        assert status == 200 and data == b"\x89PNG real"
        for path in ("/api/runs/20260102-000000/scan-lower.png", "/api/runs/20260103-000000/scan-upper.png"):
            status, answer, _ = c.get(path)
            assert status == 404 and answer["error"]["kind"] == "not-found", path


def test_an_ipv6_address_is_taken_with_or_without_its_brackets(tmp_path):
    """`--host [::1]` (as the panel prints an IPv6 address, and as it is
    typed in a browser) is ::1; an unknown name in brackets is still a
    one-line refusal."""
    from robot.rig.errors import UserError

    for host in ("[::1]", "::1"):
        served = bind(host, 0)
        try:
            assert served.url.startswith("http://[::1]:") and served.token is None, served.url
            assert served.sock.family == socket.AF_INET6
        finally:
            served.sock.close()
    with pytest.raises(UserError, match=r"--host '\[nonsense\]': "):
        bind("[nonsense]", 0)
    with panel_server(tmp_path / "state", host="[::1]") as (base, _, _):
        assert base.startswith("http://[::1]:")
        status, body, _ = Client(base).get("/api/status")
        assert status == 200, body
