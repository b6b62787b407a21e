"""A crowd of slow clients, as its own process (the attacker of issue 46's
P2): ``--count`` connections to a panel, each sending a request line and
then one more header line every ``--period`` seconds, never the blank line
that ends the headers. ``--from-one`` of them come from 127.0.0.2 and the
rest are spread over ``--spread`` other loopback addresses (127.0.0.3 on),
so that both the per-client bound and the overall one are met. A connection
the server closes is opened again at the next tick (``--no-reopen``: not).

It says what happens on stdout, one JSON line each: ``{"event": "open"}``
once every connection has been opened a first time, then one ``"tick"`` a
period (how many are open, closed by the server, opened again, the age of
the oldest still open, the answers the server sent before closing), and
``"end"`` when its stdin closes (then it closes everything and exits).

    python tests/slowcrowd.py --port 8080 --count 1100 --period 5

Used by tests/test_web_hostile_slow.py and benchmarks/slow_clients.py,
through the helpers at the end (a `serve` process, the crowd's process, an
e-stop timed)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from collections import Counter
from pathlib import Path


class Crowd:
    def __init__(self, port: int, count: int, from_one: int, spread: int, target: str = "127.0.0.1"):
        self.port, self.target = port, target
        sources = ["127.0.0.2"] * min(from_one, count)
        others = [str(ipaddress.IPv4Address("127.0.0.3") + i) for i in range(max(1, spread))]
        sources += [others[i % len(others)] for i in range(count - len(sources))]
        self.sources = sources
        self.socks: list[socket.socket | None] = [None] * count
        self.opened_at = [0.0] * count
        self.sel = selectors.DefaultSelector()
        self.closed_by_server = 0
        self.reopened = 0
        self.failed_opens = 0
        self.answers: Counter[str] = Counter()
        self.ticks = 0

    def open(self, i: int) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((self.sources[i], 0))
            s.settimeout(5)
            s.connect((self.target, self.port))
            s.sendall(f"GET /api/status HTTP/1.1\r\nHost: {self.target}:{self.port}\r\n".encode())
            s.setblocking(False)
        except OSError:
            s.close()
            self.failed_opens += 1
            return
        self.socks[i] = s
        self.opened_at[i] = time.monotonic()
        self.sel.register(s, selectors.EVENT_READ, i)

    def gone(self, i: int) -> None:
        s = self.socks[i]
        if s is None:
            return
        self.sel.unregister(s)
        s.close()
        self.socks[i] = None
        self.closed_by_server += 1

    def read(self, i: int) -> None:
        """The server wrote (an answer before closing) or closed."""
        s = self.socks[i]
        assert s is not None
        try:
            data = s.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data.startswith(b"HTTP/1.1 "):
            status = data[9:12].decode("latin-1")
            kind = b""
            if b'"kind": "' in data:
                kind = data.split(b'"kind": "', 1)[1].split(b'"', 1)[0]
            self.answers[f"{status} {kind.decode('latin-1')}".strip()] += 1
        if not data:
            self.gone(i)

    def dribble(self, reopen: bool) -> None:
        self.ticks += 1
        for i, s in enumerate(self.socks):
            if s is None:
                if reopen:
                    self.open(i)
                    self.reopened += 1
                continue
            try:
                s.send(f"X-Slow-{self.ticks}: {'a' * 20}\r\n".encode())
            except OSError:
                self.gone(i)

    def report(self, event: str, **extra: object) -> None:
        now = time.monotonic()
        ages = [now - t for s, t in zip(self.socks, self.opened_at, strict=True) if s is not None]
        print(json.dumps({"event": event, "open": len(ages), "closed_by_server": self.closed_by_server,
                          "reopened": self.reopened, "failed_opens": self.failed_opens,
                          "oldest_s": round(max(ages, default=0.0), 2), "answers": dict(self.answers),
                          **extra}),
              flush=True)

    def run(self, period: float, reopen: bool) -> None:
        t0 = time.monotonic()
        for i in range(len(self.socks)):
            self.open(i)
        self.report("open", took_s=round(time.monotonic() - t0, 2))
        stdin = sys.stdin.buffer
        os.set_blocking(stdin.fileno(), False)
        self.sel.register(stdin, selectors.EVENT_READ, None)
        next_tick = time.monotonic() + period
        while True:
            for key, _ in self.sel.select(max(0.0, next_tick - time.monotonic())):
                if key.data is None:
                    if not stdin.read(4096):
                        self.report("end")
                        return
                else:
                    self.read(key.data)
            if time.monotonic() >= next_tick:
                self.dribble(reopen)
                next_tick = time.monotonic() + period
                self.report("tick")

    def close(self) -> None:
        for s in self.socks:
            if s is not None:
                s.close()
        self.sel.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, default=1100)
    ap.add_argument("--from-one", type=int, default=500)
    ap.add_argument("--spread", type=int, default=40)
    ap.add_argument("--period", type=float, default=5.0)
    ap.add_argument("--no-reopen", action="store_true")
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.count + 64
    if soft < need:
        if hard != resource.RLIM_INFINITY and hard < need:
            print(json.dumps({"event": "cannot", "why": f"{args.count} sockets need {need} open files; "
                                                       f"the hard limit is {hard}"}), flush=True)
            return 2
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    crowd = Crowd(args.port, args.count, args.from_one, args.spread)
    try:
        crowd.run(args.period, not args.no_reopen)
    finally:
        crowd.close()
    return 0


# ---------------------------------------------------------------- for the tests and the benchmark

ROOT = Path(__file__).resolve().parents[1]


class CannotCrowd(Exception):
    """This machine cannot open that many sockets in one process."""


class CrowdProcess:
    """This file run as a process: its reports, line by line."""

    def __init__(self, port: int, *args: str):
        self.proc = subprocess.Popen([sys.executable, __file__, "--port", str(port), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def next(self) -> dict:
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            raise AssertionError(f"the crowd ended (exit {self.proc.poll()})")
        report = json.loads(line)
        if report["event"] == "cannot":
            self.kill()
            raise CannotCrowd(report["why"])
        return report

    def end(self) -> dict | None:
        """Its stdin closed (it closes every connection and ends): its last report."""
        out, _ = self.proc.communicate(timeout=30)
        lines = [json.loads(ln) for ln in out.splitlines() if ln.strip()]
        return lines[-1] if lines else None

    def kill(self) -> None:
        """Ended, whatever it was doing (nothing is left running)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def serve_process(folder: Path, *args: str, files: int | None = None) -> tuple[subprocess.Popen, int, Path]:
    """`cuberobot serve --port 0` as its own process (with ``files``, its
    RLIMIT_NOFILE, soft and hard), once it has answered an e-stop (the first
    request of its life loads what answering needs): (process, port, the
    file of its stderr)."""
    def limit() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    err = folder / "serve.err"
    with open(err, "wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", "robot", "serve", "--port", "0", "--state-dir",
                                 str(folder / "state"), *args], stdout=subprocess.PIPE, stderr=f, cwd=ROOT,
                                preexec_fn=limit, text=True)
    url = proc.stdout.readline().strip() if proc.stdout else ""
    if not url:
        stop_serve(proc)
        raise AssertionError(err.read_text())
    port = urllib.parse.urlsplit(url).port
    assert port is not None
    status, _, _ = timed_estop(port)
    assert status == 200, status
    return proc, port, err


def stop_serve(proc: subprocess.Popen) -> int:
    """Ctrl-C, then its exit status (killed after 20 s)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
    return proc.returncode


def timed_estop(port: int) -> tuple[int | None, object, float]:
    """POST /api/estop over a new connection, as the page's button sends it:
    (status, answer, seconds from the connect to the whole answer)."""
    from webserver import read_answer

    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"POST /api/estop HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n"
                  "Connection: close\r\n\r\n".encode())
        status, answer = read_answer(s)
    return status, answer, time.monotonic() - t0


if __name__ == "__main__":
    sys.exit(main())
