"""The part of a pyserial port that a rig served inside this process has
nothing to do with: no modem lines, no break, no output buffer. The
simulated rig (``sim://``) and the rig on the Pi's own pins (``gpio://``)
are both such ports; each supplies its own reading and writing."""

from __future__ import annotations

from serial.serialutil import SerialBase


class InProcessPort(SerialBase):
    """A :class:`serial.SerialBase` whose modem lines always say "ready"."""

    def reset_output_buffer(self) -> None:
        pass

    def send_break(self, duration: float = 0.25) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass

    @property
    def cts(self) -> bool:
        return True

    @property
    def dsr(self) -> bool:
        return True

    @property
    def ri(self) -> bool:
        return False

    @property
    def cd(self) -> bool:
        return True
