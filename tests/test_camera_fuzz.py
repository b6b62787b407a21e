"""`cuberobot scan` against camera programs that misbehave at random
(issue 46): the command-camera surface of the hostile fuzz. Each example
is a plan for tests/standins/hostile_camera.py, the set-up's upper camera:
a few steps drawn from good frames, frames cut short, headers claiming up
to 65535x65535 pixels, random bytes and JPEG-like fragments, standard
error with and without newlines (up to without end), sleeps, a child
holding the pipes, SIGTERM ignored, standard output closed, an exit with
any status, and a last step repeated without end (frames, a flood of
bytes, huge headers). The lower camera sends good grey frames.

Whatever the camera does, the command (run in this process, as
tests/test_cli_fuzz.py runs every command) ends with an exit status of 0,
1, 2 or 3, prints no traceback, says a camera's failure in one line naming
the camera, keeps every line under 1200 characters and ends within
EXAMPLE_LIMIT_S; none of the cameras' processes (nor anything else in
their process groups) is left running once it has returned; and the
process's peak memory over the whole fuzz grows by less than PEAK_MB.

The full fuzz is QUOTA examples (``python benchmarks/fuzz.py --only
camera``); the suite runs CUBEROBOT_FUZZ_SCALE (default a tenth) of them,
at least SUITE_LEAST, the same seeded examples every run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hostile_cameras import CAMERA, PeakMemory, grey_frame, running, set_up_text, standin, wait_gone
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_cli_fuzz import EXIT_CODES, run_cli

SCALE = float(os.environ.get("CUBEROBOT_FUZZ_SCALE", "").strip() or "0.1")
QUOTA = 300
SUITE_LEAST = 10
TIMEOUT_S = 0.5
"""Each camera's timeout_s: a camera that sends nothing costs this a read."""
EXAMPLE_LIMIT_S = 10.0
"""Two reads of the upper camera at TIMEOUT_S, its release (at most about
2 s for a program that ignores SIGTERM), the lower camera's, the
classification, and a busy machine's slack."""
GONE_S = 10.0
PEAK_MB = 300

SMALL = standin().SMALL_JPEG
JPEG_BITS = [b"\xff\xd8", b"\xff\xd9", b"\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", b"\xff\x00",
             b"\xff\xd0", b"\xff\xff\xff", b"\xff\xc4\x00\x02", b"\xff\xe0\xff\xff",
             b"\xff\xc0\x00\x11\x08\xff\xff\xff\xff", b"\xff\xc0\x00\x02", b"\xff\xfe\x00\x00", SMALL[:100],
             SMALL[100:400], SMALL[400:]]
"""Pieces of JPEG streams: markers, a scan header, stuffed and fill bytes,
a frame header claiming 65535x65535, segments with lengths too short, and
the three parts of a real small frame."""

GOOD = [["loop", [["file", "GREY"], ["sleep", 0.02]]]]
"""A camera that behaves."""
count = st.sampled_from([0, 1, 100, 5000, 1 << 20, -1])
step = st.one_of(
    st.just(["frame"]),
    st.just(["file", "GREY"]),
    st.tuples(st.just("huge"), st.integers(0, 65535), st.integers(0, 65535)).map(list),
    st.just(["half"]),
    st.binary(max_size=3000).map(lambda b: ["bytes", b.hex()]),
    st.lists(st.one_of(st.sampled_from(JPEG_BITS), st.binary(max_size=40)), max_size=20).map(
        lambda parts: ["bytes", b"".join(parts).hex()]),
    count.map(lambda n: ["err", n]),
    st.text(max_size=300).map(lambda t: ["line", t.encode("utf-8", "replace").decode("utf-8")]),
    st.sampled_from([0, 0.01, 0.1, 0.3]).map(lambda s: ["sleep", s]),
    st.just(["child"]),
    st.just(["ignore-term"]),
    st.just(["close"]),
    st.integers(0, 255).map(lambda c: ["exit", c]),
)
endless = st.one_of(
    st.just(GOOD),
    st.just([["loop", [["frame"], ["sleep", 0.01]]]]),
    st.binary(min_size=1, max_size=4096).map(lambda b: [["loop", [["bytes", b.hex()]]]]),
    st.tuples(st.integers(1281, 65535), st.integers(0, 65535)).map(lambda s: [["loop", [["huge", *s]]]]),
    st.just([["loop", [["err", 65536]]]]),
    st.just([]),
)
plans = st.tuples(st.lists(step, min_size=1, max_size=6), endless).map(lambda p: p[0] + p[1])


def check_example(plan: list[Any], where: Path, grey: Path) -> None:
    where.mkdir()
    pids = where / "pids"
    pids.mkdir()
    text = json.dumps(plan).replace('"GREY"', json.dumps(str(grey)))
    (where / "upper.json").write_text(text)
    (where / "lower.json").write_text(json.dumps([["loop", [["file", str(grey)], ["sleep", 0.02]]]]))
    camera = [sys.executable, "-I", str(CAMERA)]
    cfg = where / "rig.toml"
    cfg.write_text(set_up_text(camera + [f"@{where / 'upper.json'}"], TIMEOUT_S, warmup=1, average=1,
                               lower=camera + [f"@{where / 'lower.json'}"]))
    os.environ["CUBEROBOT_CAMERA_PIDS"] = str(pids)
    try:
        code, out, err, elapsed = run_cli(["scan", "--config", str(cfg), "--headless"], b"")
        left, _ = wait_gone(pids, GONE_S)
    finally:
        for pid in running(pids):
            os.kill(pid, signal.SIGKILL)
        del os.environ["CUBEROBOT_CAMERA_PIDS"]
        shutil.rmtree(where, ignore_errors=True)
    shown = f"plan {text[:600]}: exit {code!r} after {elapsed:.1f} s:\n{err[-2000:]}"
    assert code in EXIT_CODES, shown
    assert "Traceback" not in err and "Traceback" not in out and "internal error" not in err, shown
    assert elapsed < EXAMPLE_LIMIT_S, shown
    lines = err.splitlines()
    assert all(len(line) <= 1200 for line in lines), shown
    if "camera '" in err and code != 0:
        failed = [ln for ln in lines if ln.startswith("cuberobot scan: camera '")]
        assert failed and len(lines) == 1, f"a camera's failure not in one line: {shown}"
    assert not left, f"camera processes {left} still running: {shown}"


def test_scan_survives_hostile_camera_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("XDG_DATA_HOME", "XDG_STATE_HOME"):
        (tmp_path / var).mkdir()
        monkeypatch.setenv(var, str(tmp_path / var))
    monkeypatch.chdir(tmp_path)
    grey = grey_frame(tmp_path / "grey.jpg")
    examples = 0
    quota = max(SUITE_LEAST, round(QUOTA * SCALE))

    @settings(max_examples=quota, phases=[Phase.explicit, Phase.reuse, Phase.generate], derandomize=True,
              database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                    HealthCheck.large_base_example])
    @given(plans)
    def fuzz(plan: list[Any]) -> None:
        nonlocal examples
        examples += 1
        check_example(plan, tmp_path / f"ex{examples}", grey)

    check_example(GOOD, tmp_path / "first", grey)  # what every scan loads (OpenCV, ...) is not counted
    t0 = time.monotonic()
    with PeakMemory() as peak:
        fuzz()
    print(f"\nfuzz camera: {examples} examples in {time.monotonic() - t0:.1f} s, "
          f"peak memory {peak.added:+.0f} MB")
    assert examples >= quota
    assert peak.added < PEAK_MB, f"{peak.added:.0f} MB more at the peak"
