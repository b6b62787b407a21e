"""The rig between runs (robot/web/between_runs.py): which holder a kind of
rig gets, and what each one's emergency stop and clear say with no run going
on, on real rigs and real ports (a port that is not there is a real one too)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from robot.app.engines import engine_for
from robot.app.events import Face
from robot.rig.loading import load_config
from robot.sim.protocol_sim import forget, sim_url
from robot.web.kept_line import KeptLine
from robot.web.own_lines import OwnLines
from robot.web.runs import Options, Status, rig_between_runs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "config" / "examples"


def _holder(cfg, options, told=None):
    return rig_between_runs(cfg, options, on_change=(told.append if told is not None else lambda rig: None),
                            on_button=lambda: None, busy=lambda: False)


def test_the_kind_picks_the_holder_once_and_the_holder_the_runs_line(tmp_path):
    """Six motors keep their line (a run is lent it: its engine gets no port);
    a flipper and a two-gripper keep none (a run's engine opens the port itself)."""
    six = _holder(load_config(), Options(rig_port="sim://", state_dir=str(tmp_path)))
    assert isinstance(six, KeptLine) and six.line_for_a_run() == (None, None)
    for name in ("flipper.toml", "two-gripper.toml"):
        own = _holder(load_config(EXAMPLES / name), Options(rig_port="sim://x", state_dir=str(tmp_path)))
        assert isinstance(own, OwnLines) and own.line_for_a_run() == ("sim://x", None), name
    cfg = load_config(EXAMPLES / "flipper.toml")
    port, firmware = _holder(cfg, Options(rig_port="sim://", state_dir=str(tmp_path))).line_for_a_run()
    engine = engine_for(cfg, Face(), port=port, firmware=firmware, state_dir=str(tmp_path))
    assert engine.estop() is False  # made, not run: no line open yet for a stop to take


def test_a_kept_line_not_connected_says_why_the_idle_stop_did_not_go(tmp_path):
    """Its listener not started (no line), the port not there: the stop is
    tried beside it, then through a line of its own, and the answer says the
    rig could not be reached; with --firmware, that the emulated rig is not
    running yet."""
    missing = str(tmp_path / "ttyACM-none")
    rig = _holder(load_config(), Options(rig_port=missing, state_dir=str(tmp_path)))
    sent = rig.estop(None, Status(), None)
    assert not sent["sent"] and sent["message"].startswith("no run is going on and the rig could not be "
                                                           "reached:"), sent
    assert missing in sent["message"] and not rig.estop_is_quick()
    emulated = _holder(load_config(), Options(firmware="build/none.elf", state_dir=str(tmp_path)))
    assert emulated.estop(None, Status(), "jog") == {
        "sent": False, "message": "the emulated rig is not running: it is starting"}


def test_own_lines_on_a_virtual_rig_of_each_runs_own_say_there_is_nothing_to_stop_or_clear(tmp_path):
    """A bare sim:// gives each run and jog a virtual rig of its own: idle,
    nothing is latched and nothing is sent; during a jog whose line is not
    open yet, the jog is told to make no move."""
    for name, kind in (("flipper.toml", "flipper"), ("two-gripper.toml", "two-gripper")):
        rig = _holder(load_config(EXAMPLES / name), Options(rig_port="sim://", state_dir=str(tmp_path)))
        assert rig.estop(None, Status(), None) == {
            "sent": False, "message": f"no run is going on: the virtual {kind} rig is idle"}
        assert rig.clear(lambda what: contextlib.nullcontext()) == {
            "cleared": True, "message": f"the virtual {kind} rig keeps no latch: nothing to clear"}
        assert rig.estop_is_quick() and not rig.jog_estop.is_set()
        jogging = rig.estop(None, Status(), "jog")
        assert not jogging["sent"] and "the jog makes no move" in jogging["message"], jogging
        assert rig.jog_estop.is_set()


def test_own_lines_on_a_named_rig_latch_it_when_idle_and_clear_it_holding_the_rig(tmp_path):
    """A named sim://NAME outlives a run: the idle stop reaches it over a line
    of its own, the pages are told it is latched, and Clear clears it over
    another, holding the rig (as a jog would) while it does."""
    url = sim_url(f"holder-{time.monotonic_ns()}")
    told: list[dict] = []
    held: list[str] = []

    @contextlib.contextmanager
    def holding(what):
        held.append(what)
        yield

    try:
        rig = _holder(load_config(EXAMPLES / "flipper.toml"), Options(rig_port=url, state_dir=str(tmp_path)),
                      told)
        rig.open()
        assert rig.describe()["connected"] and not rig.describe()["estop_latched"]
        sent = rig.estop(None, Status(), None)
        assert sent == {"sent": True,
                        "message": "emergency stop sent to the idle rig; clear it before the next run"}
        assert told and told[-1]["estop_latched"] is True
        assert rig.clear(holding) == {"cleared": True, "message": "emergency stop cleared"}
        assert held == ["clear"] and told[-1]["estop_latched"] is False
    finally:
        forget(url)
