"""This machine's own addresses, read from its network interfaces.

The panel on ``--host 0.0.0.0`` must accept a page opened by any address the
machine has, and ``serve`` prints them. ``getaddrinfo(hostname)`` is not that
list: where ``/etc/hosts`` maps the host name to loopback (Raspberry Pi OS
writes ``127.0.1.1 raspberrypi``; many images write ``127.0.0.1``) it names
no LAN address at all.

The addresses come from the C library's ``getifaddrs(3)`` through ctypes.
Why that and not the alternatives:

* it lists every address of every interface, IPv4 and IPv6, as the kernel
  has them (``socket.if_nameindex`` with the ``SIOCGIFADDR`` ioctl gives one
  IPv4 address an interface and no IPv6);
* it is in every Linux C library (glibc, musl), macOS and the BSDs, with no
  program to run and no text to parse (``ip -j addr`` needs iproute2 and a
  subprocess; psutil is a compiled dependency the project does not have).

Where it is missing (Windows) or fails, the host name's addresses are the
fallback, as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import ipaddress
import logging
import socket
import sys
from dataclasses import dataclass

log = logging.getLogger(__name__)

IFF_UP = 0x1
IFF_LOOPBACK = 0x8
"""Interface flags (the same bits in Linux's and the BSDs' <net/if.h>)."""


@dataclass(frozen=True)
class Address:
    """One address of one interface."""

    interface: str
    address: str
    """As text, without an IPv6 zone (``192.0.2.2``, ``fd00::2``)."""

    @property
    def ip(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
        return ipaddress.ip_address(self.address)


class _IfAddrs(ctypes.Structure):
    pass


_IfAddrs._fields_ = [  # struct ifaddrs: the same first five fields on Linux, macOS and the BSDs
    ("ifa_next", ctypes.POINTER(_IfAddrs)),
    ("ifa_name", ctypes.c_char_p),
    ("ifa_flags", ctypes.c_uint),
    ("ifa_addr", ctypes.c_void_p),
    ("ifa_netmask", ctypes.c_void_p),
]


def interface_addresses() -> list[Address]:
    """The addresses of the interfaces that are up (loopback included), in
    the kernel's order; the host name's addresses where ``getifaddrs`` cannot
    be used."""
    try:
        return _getifaddrs()
    except (OSError, AttributeError) as e:
        log.info("the interfaces could not be listed (%s): using the host name's addresses", e)
        return _by_host_name()


def _getifaddrs() -> list[Address]:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    head = ctypes.POINTER(_IfAddrs)()
    if libc.getifaddrs(ctypes.byref(head)) != 0:
        raise OSError(ctypes.get_errno(), "getifaddrs failed")
    out: list[Address] = []
    try:
        node = head
        while node:
            entry = node.contents
            if entry.ifa_addr and entry.ifa_flags & IFF_UP:
                address = _sockaddr_text(entry.ifa_addr)
                if address is not None:
                    out.append(Address((entry.ifa_name or b"?").decode(errors="replace"), address))
            node = entry.ifa_next
    finally:
        libc.freeifaddrs(head)
    return out


def _sockaddr_text(pointer: int) -> str | None:
    """The IPv4 or IPv6 address in a ``struct sockaddr``, or None for another
    family (a link-layer address). The BSDs start it with a length byte
    before a one-byte family; Linux has a two-byte family."""
    raw = ctypes.string_at(pointer, 24)
    bsd = sys.platform != "linux" and not sys.platform.startswith("linux")
    family = raw[1] if bsd else int.from_bytes(raw[0:2], sys.byteorder)
    if family == socket.AF_INET:
        return socket.inet_ntop(socket.AF_INET, raw[4:8])
    if family == socket.AF_INET6:
        return socket.inet_ntop(socket.AF_INET6, raw[8:24])
    return None


def _by_host_name() -> list[Address]:
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [Address("?", str(info[4][0]).split("%")[0]) for info in infos]


def reachable(addresses: list[Address]) -> list[Address]:
    """The addresses another machine can open a page by, best first: IPv4
    before IPv6 (a phone on a LAN is surest to have IPv4), private (the LAN)
    before public; no loopback, no link-local (an IPv6 link-local address
    needs a zone that browsers do not take in an address)."""
    seen: set[str] = set()
    kept = []
    for a in addresses:
        ip = a.ip
        if ip.is_loopback or ip.is_link_local or ip.is_unspecified or ip.is_multicast or a.address in seen:
            continue
        seen.add(a.address)
        kept.append(a)
    return sorted(kept, key=lambda a: (a.ip.version, not a.ip.is_private))
