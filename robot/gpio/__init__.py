"""A rig on the rig computer's own pins: ``port = "gpio://"``.

CUBOTino drives its servos straight from a Raspberry Pi's header, with no
Arduino. Here the firmware's part (docs/protocol.md) is played inside
cuberobot (:mod:`.rig`) and the pins are driven with gpiozero
(:mod:`.board`); the driver (robot/rig/link.py) talks to it through
pyserial exactly as to a serial line, so the rig's kind, the journal, the
emergency stop and resume work unchanged. Importing this package registers
the ``gpio://`` URL handler with pyserial (:mod:`.protocol_gpio`); the
driver itself never imports it, the application does (robot/app/rigs.py).
"""

from __future__ import annotations

import serial

if __name__ not in serial.protocol_handler_packages:
    serial.protocol_handler_packages.append(__name__)
