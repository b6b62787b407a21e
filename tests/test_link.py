"""The driver against the virtual rig: handshake, journaling, Ctrl-C, stalls, resume."""

import dataclasses

import pytest

from robot.rig import job
from robot.rig import protocol as P
from robot.rig.errors import RigError
from robot.rig.journal import Journal
from robot.rig.link import Link, LinkLost
from robot.rig.loading import load_config
from robot.rig.motion import plan
from robot.sim.protocol_sim import forget, rig_for_url
from solver import SOLVED_CUBE, group_steps, invert, random_scramble


@pytest.fixture
def cfg():
    c = load_config()
    return dataclasses.replace(c, rig=dataclasses.replace(c.rig, reply_timeout_s=0.005))


def _url(name, scramble, **opts):
    start = SOLVED_CUBE.apply(scramble)
    q = "&".join(f"{k}={v}" for k, v in {"speed": "max", "state": start.to_facelets(), **opts}.items())
    url = f"sim://{name}?{q}"
    forget(url)
    return url, start


def test_a_solve_on_the_virtual_rig_is_journaled_and_timed_exactly(cfg, tmp_path):
    scramble = random_scramble(20, seed=1)
    url, start = _url("plain", scramble)
    with Link(cfg, url) as link, Journal(tmp_path) as journal:
        hello = link.connect()
        assert hello.board == P.BOARD_VIRTUAL
        report = job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
    rig = rig_for_url(url)
    assert rig.cube.is_solved() and report.state == SOLVED_CUBE.to_facelets()
    assert report.executed_s == pytest.approx(report.estimated_s, abs=1e-9)
    rec = rig.record
    assert (rec[-1].tick - rec[0].start) / P.TICK_HZ == pytest.approx(report.estimated_s, abs=1e-9)
    (js,) = journal.read()
    assert [t["id"] for t in js.turns] == [r.move_id for r in rec]
    assert js.end["status"] == "done"
    # Two fsyncs per turn (sent, then done), one each for the job's start, its session and its end.
    assert journal.fsyncs == 2 * len(rec) + 3


class WatchedLink(Link):
    """Checks the journal rule: no MOVE leaves before every DONE seen is on disk."""

    def __init__(self, *a, journal, **kw):
        super().__init__(*a, **kw)
        self.journal = journal
        self.dones_seen = []
        self.violations = 0

    def _handle(self, seq, msg):
        if isinstance(msg, P.Done):
            self.dones_seen.append(msg.move_id)
        super()._handle(seq, msg)

    def move(self, cmd):
        on_disk = {t["id"] for js in self.journal.read() for t in js.turns}
        if not set(self.dones_seen) <= on_disk:
            self.violations += 1
        return super().move(cmd)


def test_every_done_is_on_disk_before_the_next_move_is_sent(cfg, tmp_path):
    scramble = random_scramble(15, seed=2)
    url, start = _url("watched", scramble, faults="drop:0.01,corrupt:0.01", seed=4)
    with Journal(tmp_path) as journal, WatchedLink(cfg, url, journal=journal) as link:
        link.connect()
        job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
        assert link.violations == 0 and link.dones_seen
    assert rig_for_url(url).cube.is_solved()


def test_ctrl_c_sends_the_emergency_stop_and_resume_asks_for_a_rescan(cfg, tmp_path):
    scramble = random_scramble(12, seed=3)
    url, start = _url("ctrlc", scramble)
    rig = rig_for_url(url)
    sent = []
    with Journal(tmp_path) as journal, Link(cfg, url) as link:
        link.connect()
        real_write = link.ser.write
        link.ser.write = lambda data: (sent.append(bytes(data)), real_write(data))[1]

        def interrupt(td):
            if td.index == 3:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            steps = plan(group_steps(invert(scramble)), link.config)
            job.run(link, journal, start, steps, on_turn=interrupt)
        assert sent[-1] == bytes((P.RT_ESTOP,)) * 9  # three runs of three
        assert rig.estop and not rig.record[-1].complete
    with Journal(tmp_path) as journal, Link(cfg, url) as link:
        with pytest.raises(job.StateUnknown, match="Rescan"):
            job.resume(link, journal)
        assert journal.read()[-1].end["status"] == "unknown"


def test_resume_after_a_pulled_cable_finishes_from_the_true_state(cfg, tmp_path):
    scramble = random_scramble(20, seed=5)
    url, start = _url("pulled", scramble, faults="disconnect:600")
    with Journal(tmp_path) as journal:
        with Link(cfg, url) as link, pytest.raises(LinkLost):
            link.connect()
            job.run(link, journal, start, plan(group_steps(invert(scramble)), link.config))
        done_before = journal.unfinished().done
        with Link(cfg, url) as link:
            report = job.resume(link, journal)
    rig = rig_for_url(url)
    assert rig.cube.is_solved() and report.state == SOLVED_CUBE.to_facelets()
    (js,) = Journal(tmp_path).read()
    assert [t["id"] for t in js.turns] == [r.move_id for r in rig.record]
    assert len(js.turns) > done_before  # the rig finished queued turns while unplugged


def test_a_stalled_motor_stops_the_rig_and_says_so(cfg, tmp_path):
    url, start = _url("stall", [], faults="stall:F")
    with Link(cfg, url) as link, Journal(tmp_path) as journal:
        link.connect()
        link.completion_margin_s = 0.02
        with pytest.raises(job.StateUnknown, match="did not finish"):
            job.run(link, journal, start, plan(group_steps("U F R"), link.config))
    rig = rig_for_url(url)
    assert rig.estop and [r.move_id for r in rig.record if r.complete] == [0]


def test_a_reset_between_jobs_is_survived(cfg, tmp_path):
    url, start = _url("between", [])
    rig = rig_for_url(url)
    with Link(cfg, url) as link, Journal(tmp_path) as journal:
        link.connect()
        job.run(link, journal, start, plan(group_steps("U R"), link.config))
        rig._boot(cause=2)  # the firmware restarts while idle
        report = job.run(link, journal, SOLVED_CUBE.apply("U R"), plan(group_steps("R' U'"), link.config))
    assert rig.cube.is_solved() and report.state == SOLVED_CUBE.to_facelets()


def test_version_mismatch_and_silence_are_clear_errors(cfg):
    url, _ = _url("v1", [], protocol=1)
    with Link(cfg, url) as link, pytest.raises(RigError, match="protocol version 1.*version 2"):
        link.connect()
    with Link(cfg, "/dev/cuberobot-no-such-port") as link, pytest.raises(RigError, match="cannot open"):
        link.connect()


def test_button_events_reach_the_link(cfg):
    url, _ = _url("button", [])
    with Link(cfg, url) as link:
        link.connect()
        rig_for_url(url).press()
        link.poll(0.01)
        assert link.buttons == 1


def test_a_second_journal_on_the_same_rig_never_takes_the_first_ones_moves_for_its_own(cfg, tmp_path):
    """Two state folders, one rig that stays up: job A (journal A) finishes;
    job B (journal B, whose ids would also start at 0) dies before its first
    move. Resume must see that the rig's last finished move is not B's."""
    url, start = _url("two-journals", [])
    rig = rig_for_url(url)
    with Link(cfg, url) as link:
        link.connect()
        with Journal(tmp_path / "a") as journal:
            job.run(link, journal, start, plan(group_steps("U R F D L B"), link.config))
        after_a = SOLVED_CUBE.apply("U R F D L B")
        real_move = link.move

        def dies(cmd):
            raise SystemExit("killed before the first move went out")

        link.move = dies
        with Journal(tmp_path / "b") as journal, pytest.raises(SystemExit):
            job.run(link, journal, after_a, plan(group_steps("R2 U2 F2 D2 L2 B2 U R"), link.config))
        link.move = real_move
    with Link(cfg, url) as link, Journal(tmp_path / "b") as journal:
        report = job.resume(link, journal)
    expected = after_a.apply("R2 U2 F2 D2 L2 B2 U R").to_facelets()
    assert report.state == expected == rig.cube.to_facelets()
    assert len(rig.record) == 6 + 8  # every move once
