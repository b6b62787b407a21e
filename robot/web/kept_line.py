"""A rig that keeps its line (six motors): the standing rig's line
(robot/web/standing_rig.py), open for as long as the panel serves, is lent
to each run and each jog; the emergency stop goes onto it at once, and the
latch the page shows is the rig's own, as the listener hears it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vision.errors import VisionError

from ..app.jog import clear_to_jog
from ..app.kindwork import jog as make_jog
from ..rig.config import Config
from ..rig.errors import RigError, UserError
from .between_runs import GAVE_UP, GIVE_UP_OR_RESUME, Hold, Jogged, RigBetweenRuns, StopMark
from .options import Options
from .standing_rig import StandingRig

if TYPE_CHECKING:
    from ..app.engines import RunEngine

log = logging.getLogger(__name__)


class KeptLine(RigBetweenRuns):
    """The standing rig's line, which the panel holds between runs."""

    def __init__(self, cfg: Config, options: Options, *, on_change: Callable[[dict[str, Any]], None],
                 on_button: Callable[[], None], busy: Callable[[], bool]):
        super().__init__(cfg, options, on_change)
        self.standing = StandingRig(cfg, port=options.rig_port, firmware=options.firmware,
                                    speed=options.firmware_speed, on_button=on_button, busy=busy,
                                    on_change=on_change)

    def open(self) -> None:
        """Connect to the rig and listen for its button."""
        self.standing.start()

    def line_for_a_run(self) -> tuple[str | None, str | None]:
        return None, None  # the run's thread is given the kept line when it starts

    def run(self, engine: RunEngine, status: StopMark, go: Callable[[], None],
            failed: Callable[[str], None]) -> None:
        """A run on the standing rig's line, which the listener lets go of within one slice."""
        error: BaseException | None = None
        try:
            with self.standing.lock:  # the line is lent to the run
                engine.rig = self.standing.ready()
                self.standing.put_in(engine.seed)
                go()
        except (RigError, UserError, VisionError) as e:  # told in their own words: a person's to mend
            error = e
            failed(str(e))
            _name_the_failure(engine, str(e))
        except Exception as e:  # noqa: BLE001 - a run's failure is told to the page, not lost in a thread
            error = e
            log.exception("the run failed")
            failed(f"the run failed: {type(e).__name__}: {e}")
            _name_the_failure(engine, f"the run failed: {type(e).__name__}: {e}")
        finally:
            self.standing.after_run(error)

    def estop(self, engine: RunEngine | None, status: StopMark, held_by: str | None) -> dict[str, Any]:
        if engine is not None:
            if engine.estop() or self.standing.estop():  # the run's line, or the kept one it is about to use
                return {"sent": True, "message": "emergency stop sent to the rig"}
            return {"sent": False, "message": "the run is stopping; the rig is not connected "
                                              f"({self.standing.error or 'connecting'})"}
        if self.standing.estop():
            handle = self.standing.handle
            if handle is not None:  # sent: latched as far as anyone here knows, until the rig says otherwise
                handle.link.estop_latched = True
            what = "the rig the jog moves" if held_by == "jog" else "the idle rig"
            return {"sent": True, "message": f"emergency stop sent to {what}; clear it before the next run"}
        if self.options.firmware:
            return {"sent": False, "message": "the emulated rig is not running: "
                                              f"{self.standing.error or 'it is starting'}"}
        # the kept line is down: try the port as it is
        return self.estop_port(self.options.rig_port or self.cfg.rig.port)

    def estop_is_quick(self) -> bool:
        return self.standing.handle is not None

    def clear(self, holding: Hold) -> dict[str, Any]:
        """Over the kept line, under its lock (the listener's, or a jog's)."""
        self.standing.clear_estop()
        return {"cleared": True, "message": "emergency stop cleared"}

    def jog(self, jog: Any, give_up_job: bool, jogged: Jogged, *, after_dry_run: bool) -> dict[str, Any]:
        """A face jog on the kept line, under its lock (the listener lets go of it within one slice)."""
        with self.standing.lock:
            link = self.standing.ready().link
            gave_up = clear_to_jog(link, self.cfg, self.options.state_dir, give_up=give_up_job,
                                   then=GIVE_UP_OR_RESUME)
            try:
                done = make_jog(link, self.cfg, jog, lambda _line: None)
            except RigError:
                self.standing.report()
                raise
        self.standing.report()
        self.follow(jog, jogged, after_dry_run)
        return {"moved": True, "message": done.summary + (GAVE_UP if gave_up else ""), **done.details,
                "gave_up_job": gave_up}

    def switch(self, port: str) -> dict[str, Any]:
        return self.standing.switch(port)

    def describe(self) -> dict[str, Any]:
        return self.standing.describe()

    def close(self, timeout: float) -> None:
        self.standing.close(timeout=timeout)


def _name_the_failure(engine: RunEngine, message: str) -> None:
    """A run that ended on an error the engine does not name (a camera
    missing, a scan that broke) wrote its record without a status: the
    last-runs list then showed "· ?". The record is written again saying
    it failed, and why, as the page was told."""
    record = engine.record
    if record is None or record.status is not None or not record.run_dir:
        return  # named by the engine, or no record written at all (the rig never answered)
    record.status, record.message = "failed", message
    try:
        record.write(Path(record.run_dir))
    except OSError as e:
        log.warning("could not write the failed run's record again: %s", e)
