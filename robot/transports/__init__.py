"""pyserial URL handlers of cuberobot (``sim://``): importing this package
registers them with :func:`serial.serial_for_url`."""

import serial

if __name__ not in serial.protocol_handler_packages:
    serial.protocol_handler_packages.append(__name__)
