"""`cuberobot serve`: the web panel and local API."""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import replace
from pathlib import Path

from ...app.kinds import kind_of
from ...app.limits import check_rig_options, rig_claims
from ...rig.errors import UserError
from ...rig.loading import load_config
from ...rig.owner import InUse
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
    # the first scan's captures: a rig that looks again after turning a face adds those (a flipper has none)
    first_scan = cfg.start.recaptures + (cfg.start.look_again if kind_of(cfg).look_again_scans else 0)
    lighting = sim_glare(first_scan) if args.sim_glare else None
    options = Options(rig_port=args.rig, firmware=args.firmware, state_dir=args.state_dir,
                      sim_lighting=lighting)
    from ...rig.journal import default_state_dir
    from ...web.server import TOKEN_FILE

    state = Path(args.state_dir) if args.state_dir else default_state_dir()
    # The folder (and the rig) claimed before the token is read or replaced: a `serve --new-token`
    # refused because another serve holds them changes nothing (the saved browsers keep working).
    with contextlib.ExitStack() as claims:
        try:
            describe = claims.enter_context(
                rig_claims(None if args.firmware else (args.rig or cfg.rig.port), args.state_dir))
        except InUse as e:
            raise with_the_token(e, state) from None
        served = bind(args.host, args.port, token_file=state / TOKEN_FILE, new_token=args.new_token)
        # for the next comer: "use the panel at ..." (and whether the address needs the kept token)
        describe({"url": served.url.split("?")[0], "token": served.token is not None})
        for url in served.urls:
            print(url, flush=True)
        if served.token:
            print(f"the panel listens on {args.host}: open one of the addresses above once (each holds the "
                  f"token, kept in {state / TOKEN_FILE}; `serve --new-token` replaces it); the browser then "
                  "keeps it in a cookie, and the bare address works after a restart", flush=True)
            qr = terminal_qr(served.url)
            if qr:
                print(f"or scan this with a phone ({served.url.split('?')[0]}):\n{qr}", flush=True)
        elif args.new_token:
            print("--new-token: the panel on this machine only needs no token", flush=True)
        serve(cfg, options, served, verbose=args.verbose)
    return 0


def with_the_token(refusal: InUse, state: Path) -> InUse:
    """A second `serve` on a state folder a running panel holds is refused;
    the panel's address it names is made whole with the token kept in that
    folder (the one the running panel took at its start: a refused serve
    never replaces it), so that a person who lost the address finds it
    again here, as the sign-in page says. Only the same folder's own panel
    gets it: a rig held by a panel on another folder is named as it was."""
    from ...rig.owner import describe_holder, folder_lock, holder_of
    from ...web.server import TOKEN_FILE, kept_token

    holder = holder_of(folder_lock(state)) or {}
    url = holder.get("url")
    if not (isinstance(url, str) and url and holder.get("token")):
        return refusal  # not a panel, or one on this machine only: its bare address is the whole of it
    try:
        token = kept_token(state / TOKEN_FILE)
    except UserError:
        token = None
    if token is None:
        return refusal
    return InUse(f"the state folder {state} is in use by {describe_holder(holder)}: use the panel at "
                 f"{url[:200]}?token={token} (its address with its token: open it once, and the browser "
                 "keeps it), or give this command another --state-dir", holder)


def terminal_qr(url: str) -> str:
    """``url`` as a QR code drawn with block characters (two modules a
    character, so that it fits an 80x24 terminal), or "" without segno."""
    try:
        import segno
    except ImportError:
        return ""
    matrix = [list(row) for row in segno.make(url, error="l", micro=False).matrix]
    quiet = 2
    width = len(matrix[0]) + 2 * quiet
    rows = [[0] * width for _ in range(quiet)] + [[0] * quiet + r + [0] * quiet for r in matrix] + \
        [[0] * width for _ in range(quiet + 1)]
    glyph = {(0, 0): "\u2588", (1, 0): "\u2584", (0, 1): "\u2580", (1, 1): " "}  # dark modules as blanks
    return "\n".join("".join(glyph[(top, bottom)] for top, bottom in zip(rows[y], rows[y + 1], strict=True))
                     for y in range(0, len(rows) - 1, 2))


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
    p.add_argument("--new-token", action="store_true",
                   help="replace the panel's kept token (pages and bookmarks opened with the old one must "
                        "be opened again by the new address)")
    p.add_argument("--sim-glare", action="store_true",
                   help="simulated cameras: glare on every capture of each run's first scan (doubtful "
                        "stickers to fix on the page)")
    p.set_defaults(func=_serve)
