"""`cuberobot serve`: the web panel and local API."""

from __future__ import annotations

import argparse
from dataclasses import replace

from ...app.limits import check_rig_options, rig_claims
from ...rig.config import load_config
from ...rig.errors import UserError
from ..limits import path, text, whole
from . import Registry


def _serve(args: argparse.Namespace) -> int:
    try:
        from ...web.runs import Options
        from ...web.server import bind, serve
    except ImportError as e:
        raise UserError(f"the web panel needs its extra: pip install -e '.[web]' ({e})") from None

    cfg = load_config(args.config)
    check_rig_options(cfg, args.rig, "--rig", args.firmware, args.state_dir)
    lighting = sim_glare(cfg.start.recaptures + cfg.start.look_again) if args.sim_glare else None
    options = Options(rig_port=args.rig, firmware=args.firmware, state_dir=args.state_dir,
                      sim_lighting=lighting)
    served = bind(args.host, args.port)
    with rig_claims(None if args.firmware else (args.rig or cfg.rig.port), args.state_dir,
                    url=served.url.split("?")[0]):
        print(served.url, flush=True)
        if served.token:
            print(f"the panel listens on {args.host}: open the address above once (it holds the token); "
                  "the browser then keeps it in a cookie", flush=True)
        serve(cfg, options, served, verbose=args.verbose)
    return 0


def sim_glare(recaptures: int):  # type: ignore[no-untyped-def]
    """Simulated cameras: a lamp's reflection on the cube through every
    capture of a run's first scan (``recaptures`` after the first, the
    rig's look-again captures included), so stickers come out doubtful and
    the person is asked (to try the fix-a-sticker screen); later scans are
    clear."""
    from vision.render import Lighting

    def lighting(capture: int) -> Lighting:
        base = Lighting(kelvin=5000, intensity=1.0, noise=1.5)
        return replace(base, glare=[(0.47, 0.54, 0.08, 4.0)]) if capture <= recaptures else base

    return lighting


def register(sub: Registry) -> None:
    p = sub.add_parser("serve", help="the web panel and local API: watch, fix, start and stop from a browser")
    p.add_argument("--config", metavar="FILE", type=path,
                   help="set-up file (default: config/rig.toml, a simulated rig)")
    p.add_argument("--host", default="127.0.0.1", type=text("--host", 255),
                   help="address to listen on (default 127.0.0.1, this machine only; any other needs the "
                        "token printed at start)")
    p.add_argument("--port", type=whole(0, 65535), default=8080,
                   help="TCP port (default 8080; 0 picks a free one)")
    p.add_argument("--rig", metavar="PORT", type=text("--rig"),
                   help="the rig's serial port, pty path or URL (overrides the config)")
    p.add_argument("--firmware", metavar="ELF", type=path,
                   help="run against the real firmware in the simavr emulator instead of the configured rig")
    p.add_argument("--state-dir", metavar="DIR", type=path,
                   help="journal and run records (default: ~/.local/state/cuberobot)")
    p.add_argument("--sim-glare", action="store_true",
                   help="simulated cameras: glare on every capture of each run's first scan (doubtful "
                        "stickers to fix on the page)")
    p.set_defaults(func=_serve)
