"""Vision commands: classify, scan, calibrate."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from solver import random_cube
from solver.facelets import FACES, position_name

from ...app.kinds import kind_of
from ...app.kindwork import scan_by_rig
from ...app.limits import (
    MAX_INPUT_FILES,
    MAX_JSON_BYTES,
    MAX_SEED,
    check_output_dir,
    check_output_file,
    check_views,
    json_kind,
    loads_json,
    read_input,
)
from ...rig.config import Config, decode_text, read_limited
from ...rig.errors import UserError
from ..limits import number, path, text, whole
from . import Registry

if TYPE_CHECKING:
    from vision.classifier import Classification
    from vision.photos import PhotoScan
    from vision.profile import Profile
    from vision.setup import CameraSpec, ViewSpec


def load_setup(args: argparse.Namespace, with_profile: bool = True, cfg: Config | None = None,
               ) -> tuple[list[CameraSpec], list[ViewSpec], Profile | None]:
    """(cameras, views, profile) for the scan and calibrate commands, from
    the set-up file (``--config``, else the default one: the simulated rig);
    ``--profile`` overrides the configured colour profile. Calibrating reads
    no profile (``with_profile=False``): it makes the one the config names,
    which need not exist yet."""
    from vision.profile import load_profile

    from ...rig.loading import load_config

    cfg = cfg if cfg is not None else load_config(getattr(args, "config", None))
    check_views(cfg)
    cameras, views = list(cfg.cameras), list(cfg.views)
    name = getattr(args, "use_profile", None) or cfg.profile
    profile = None
    if name and with_profile:
        _check_profile_file(name)
        profile = load_profile(name)
    return cameras, views, profile


def _check_profile_file(name: str) -> None:
    """The file a colour profile would be read from, read with the bounds of
    any JSON input (1 MiB, 16 deep, no NaN) before the profile loader reads it."""
    from vision.profile import profile_dirs

    if name.endswith(".json") or "/" in name or "\\" in name:
        candidates = [Path(name).expanduser()]
    else:
        candidates = [d / f"{name}.json" for d in profile_dirs()]
    found = next((p for p in candidates if p.exists()), None)
    if found is not None:
        label = str(found)
        loads_json(decode_text(read_limited(found, label, MAX_JSON_BYTES, "a colour profile (.json)"), label),
                   label)


SQUARE_START = {"U": 1, "L": 10, "F": 19, "R": 28, "B": 37, "D": 46}
"""Where each face's nine squares begin in the square-numbered form of
rubiks-color-resolver (dwalton76), which robots built on it log and save:
U 1-9, L 10-18, F 19-27, R 28-36, B 37-45, D 46-54, each face in reading
order as drawn in the net, the same order as our facelets within a face."""

RGB_FORMS = ('{"rgb": [[r, g, b] x 54]} in U R F D L B facelet order (null for a sticker not seen), or'
             ' rubiks-color-resolver\'s {"1": [r, g, b], ..., "54": [r, g, b]}')


def _read_rgb_file(name: str) -> np.ndarray:
    where = "standard input" if name == "-" else name
    data = loads_json(read_input(name, "--rgb-json", MAX_JSON_BYTES, 'a JSON file {"rgb": [...]}'), where)
    return rgb_from_json(data, where)


def rgb_from_json(data: object, where: str) -> np.ndarray:
    """(54, 3) sticker colours in facelet order (NaN rows for stickers not
    seen) from a decoded ``--rgb-json`` file in either form of
    :data:`RGB_FORMS`, or a :class:`UserError` naming what is wrong."""
    if isinstance(data, dict) and "rgb" not in data and data and all(
            isinstance(k, str) and k.isascii() and k.isdigit() for k in data):
        return _rgb_from_squares(data, where)
    rgb = data.get("rgb") if isinstance(data, dict) else None
    if not isinstance(rgb, list):
        if not isinstance(data, dict):
            found = f"the file holds {json_kind(data)}, not an object"
        else:
            found = "no \"rgb\" field" if rgb is None else f"\"rgb\" is {json_kind(rgb)}, not an array"
        raise UserError(f"{where}: {found}: expected {RGB_FORMS}")
    if len(rgb) != 54:
        raise UserError(f'{where}: "rgb" has {len(rgb)} sticker(s), a cube has 54: expected {RGB_FORMS}')
    out = np.full((54, 3), np.nan)
    for i, v in enumerate(rgb):
        if v is not None:
            out[i] = _colour(v, where, f"sticker {i} ({position_name(i)})", " or null")
    return out


def _rgb_from_squares(data: dict, where: str) -> np.ndarray:
    """The square-numbered form: every square 1 to 54 once (a 3x3 cube's;
    the resolver's larger cubes number more squares and are refused)."""
    by_number = {int(k): v for k, v in data.items() if len(k) <= 4}
    extra = sorted(k for k in data if len(k) > 4 or not 1 <= int(k) <= 54)
    if extra or len(by_number) != len(data):
        shown = ", ".join(k if len(k) <= 12 else f"{k[:8]}... ({len(k)} digits)" for k in extra[:5]) \
            + (" ..." if len(extra) > 5 else "")
        raise UserError(f"{where}: square numbers {shown or 'written twice'} are not a 3x3 cube's 1 to 54:"
                        f" expected {RGB_FORMS}")
    missing = [n for n in range(1, 55) if n not in by_number]
    if missing:
        shown = ", ".join(map(str, missing[:8])) + (" ..." if len(missing) > 8 else "")
        raise UserError(f"{where}: {len(missing)} square(s) missing ({shown}): a 3x3 cube has squares"
                        f" 1 to 54: expected {RGB_FORMS}")
    out = np.full((54, 3), np.nan)
    for f, face in enumerate(FACES):
        for j in range(9):
            number, i = SQUARE_START[face] + j, 9 * f + j
            out[i] = _colour(by_number[number], where, f"square {number} ({position_name(i)})")
    return out


def _colour(v: object, where: str, what: str, or_else: str = "") -> list[float]:
    if (not isinstance(v, list) or len(v) != 3
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
            or not all(0 <= x <= 255 for x in v)):
        raise UserError(f"{where}: {what} must be [r, g, b] with values 0..255{or_else},"
                        f" not {json.dumps(v)[:60]}")
    return v


def _line(cls: Classification, prefix: str = "") -> str:
    if cls.ok:
        state = "ok"
    elif not cls.valid:
        state = f"invalid: {cls.error}"
    else:
        state = "in doubt: " + " ".join(position_name(i) for i in cls.suspects)
    return f"{prefix}{cls.facelets} {state}"


def _classify(args: argparse.Namespace) -> int:
    from vision import classify

    if len(args.rgb_json) > MAX_INPUT_FILES:
        raise UserError(f"--rgb-json: {len(args.rgb_json)} files; at most {MAX_INPUT_FILES} at a time")
    inputs = [(p, _read_rgb_file(p)) for p in args.rgb_json]  # all checked before any output
    all_ok = True
    for name, rgb in inputs:
        r = classify(rgb, min_confidence=args.min_confidence)
        all_ok &= r.ok
        if args.json:
            print(json.dumps({"file": name, **r.to_dict()}))
        else:
            print(_line(r, f"{name}: " if len(inputs) > 1 else ""))
        for w in r.warnings:
            print(f"{name}: warning: {w}", file=sys.stderr)
    return 0 if all_ok else 1


def _sim_state(args: argparse.Namespace) -> str | None:
    if getattr(args, "sim_state", None):
        from solver import normalize_facelets, parse_facelets

        from .cube import read_cube_arg

        text = read_cube_arg(args.sim_state)
        parse_facelets(text)
        return normalize_facelets(text)
    return random_cube(args.seed).to_facelets()


def _report(args: argparse.Namespace, cls: Classification, debug_note: str, **extra: object) -> int:
    """A scan's answer, the same for every way of scanning: the cube (or its
    JSON, with ``extra``) on stdout, warnings and where ``--save-debug`` put
    the pictures (``debug_note``) on stderr; exit 0 when sure, 1 in doubt."""
    if args.json:
        print(json.dumps({**cls.to_dict(), **extra, "debug_dir": args.save_debug}))
    else:
        print(_line(cls))
    for w in cls.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if args.save_debug:
        print(f"{debug_note} in {args.save_debug}", file=sys.stderr)
    return 0 if cls.ok else 1


def _scan(args: argparse.Namespace) -> int:
    if args.face:
        return _scan_face(args)
    if args.images:
        return _scan_images(args)
    if args.photos_as_drawn:
        raise UserError("--photos-as-drawn says how photos were taken: it goes with --images")
    from ...rig.loading import load_config

    cfg = load_config(args.config)
    if kind_of(cfg).scans_by_moving:
        return _scan_by_rig(args, cfg)
    for flag, given in (("--port", args.port), ("--sim-view", args.sim_view)):
        if given:
            raise UserError(f"{flag} is for a flipper's or two-gripper's rig, which shows its one camera the "
                            "faces: a six-motor rig's scan uses only its cameras")
    from vision import scan
    from vision.preview import has_display, interactive

    if args.save_debug:
        check_output_dir(args.save_debug, "--save-debug")
    cameras, views, profile = load_setup(args, cfg=cfg)
    truth = _sim_state(args)
    if args.preview and (args.headless or not has_display()):
        where = (f": annotated pictures go to {args.save_debug}" if args.save_debug
                 else "; add --save-debug DIR for annotated pictures")
        print("no display for the preview" + where, file=sys.stderr)
    while True:
        result = scan(cameras, views, profile=profile, sim_state=truth, sim_seed=args.seed,
                      debug_dir=args.save_debug)
        facelets = result.facelets
        if args.preview and not args.headless and has_display():
            action, facelets = interactive(result)
            if action == "rescan":
                continue
            if action == "quit":
                print("scan abandoned", file=sys.stderr)
                return 1
            if facelets != result.facelets:
                from solver import parse_facelets

                parse_facelets(facelets)  # a hand-corrected cube must still be a real one
                print(facelets)
                return 0
        break
    return _report(args, result.classification, "annotated images")


def _scan_by_rig(args: argparse.Namespace, cfg: Config) -> int:
    """A rig whose one camera sees one face at a time shows it the six
    faces (robot/app/kindwork.py), and the six pictures are read apart."""
    from dataclasses import replace

    from vision.scanning import write_debug

    kind = cfg.rig.kind
    refused = {"--sim-state": (args.sim_state, f"a simulated {kind} rig holds the cube --seed N puts in"),
               "--profile": (args.use_profile, f"a {kind} rig reads each face in its own picture's light, "
                                               "with no colour profile"),
               "--preview": (args.preview, "add --save-debug DIR for the six pictures")}
    for flag, (given, why) in refused.items():
        if given:
            raise UserError(f"{flag} is for a six-motor set-up's cameras: {why}")
    if args.save_debug:
        check_output_dir(args.save_debug, "--save-debug")
    scanned = scan_by_rig(cfg, args.port, args.seed, args.sim_view)
    result = scanned.result
    print(f"the rig showed the camera the six faces in {scanned.robot_moves} robot moves; the next job "
          "homes it", file=sys.stderr)
    if args.save_debug:
        write_debug(replace(result, images=result.frames), args.save_debug)
    return _report(args, result.classification, "the six pictures")


MAX_PHOTO_ARGS = 6


def _photo_paths(items: list[str]) -> dict[str, str]:
    """``--images`` as face -> file: six FACE=PATH, or one folder holding U.png, R.jpg, ..."""
    if len(items) > MAX_PHOTO_ARGS:
        raise UserError(f"--images: {len(items)} arguments; give six FACE=PATH or one folder")
    if len(items) == 1 and "=" not in items[0]:
        folder = Path(items[0])
        if not folder.is_dir():
            raise UserError(f"--images {items[0]}: not a folder; give a folder with U.jpg R.jpg ..."
                            " or six FACE=PATH")
        return _photos_in(folder, items[0])
    out = {}
    for item in items:
        face, sep, name = item.partition("=")
        if not sep or face not in FACES or not name:
            raise UserError(f"--images: {item!r} is not FACE=PATH (FACE one of U R F D L B)")
        if face in out:
            raise UserError(f"--images: face {face} given twice")
        out[face] = path(name)
    missing = [f for f in FACES if f not in out]
    if missing:
        raise UserError(f"--images: no photo for face(s) {' '.join(missing)}; give all six")
    return out


PHOTO_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")
FACE_WORDS = {"U": "up", "R": "right", "F": "front", "D": "down", "L": "left", "B": "back"}


def _names_face(stem: str, face: str) -> bool:
    """Whether a file name (without its suffix) names ``face``: the letter or
    the word (``U``, ``up``; any case) alone, or as the last or first word
    of a name split by ``-``, ``_``, space or dot (``rubiks-side-U``,
    ``cube_up``, ``U-face``), as other robots and phones name them."""
    words = [w for w in stem.lower().replace("_", "-").replace(" ", "-").replace(".", "-").split("-") if w]
    names = {face.lower(), FACE_WORDS[face]}
    return bool(words) and (words[-1] in names or words[0] in names)


def _photos_in(folder: Path, given: str) -> dict[str, str]:
    """Face -> photo of a folder, by :func:`_names_face`; a face with no photo
    or with two is refused with what was looked for and what is there."""
    photos = sorted((p for p in folder.iterdir() if p.suffix.lower() in PHOTO_SUFFIXES and p.is_file()),
                    key=lambda p: p.name)
    out = {}
    for face in FACES:
        found = [p for p in photos if _names_face(p.stem, face)]
        if not found:
            there = ", ".join(p.name for p in photos[:12]) + (" ..." if len(photos) > 12 else "")
            word = FACE_WORDS[face]
            raise UserError(
                f"--images {given}: no photo of face {face}: looked for {face} or {word} (any case),"
                f" alone or as the first or last word of the name ({face}.jpg, {word}.png,"
                f" rubiks-side-{face}.jpeg), ending {' '.join(PHOTO_SUFFIXES)}; the folder has "
                + (there or "no photos") + ": rename them, or give six FACE=PATH")
        if len(found) > 1:
            raise UserError(f"--images {given}: more than one photo of face {face}: "
                            + ", ".join(p.name for p in found) + ": keep one, or give six FACE=PATH")
        out[face] = str(found[0])
    return out


def _scan_images(args: argparse.Namespace) -> int:
    """``scan --images``: six photos, one per face, read with no geometry given."""
    from vision.photos import read_photos

    for opt in ("preview", "config", "sim_state", "use_profile"):
        if getattr(args, opt, None):
            flag = opt.replace("_", "-").replace("use-", "")
            raise UserError(f"--images reads photos: --{flag} does not go with it")
    paths = _photo_paths(args.images)
    if args.save_debug:
        check_output_dir(args.save_debug, "--save-debug")
    result = read_photos(paths, debug_dir=args.save_debug, as_drawn=args.photos_as_drawn)
    others = result.alternatives
    if others and not result.classification.ok and not args.json:
        print(_which_way_up(result), file=sys.stderr)
        if not args.headless and sys.stdin.isatty() and sys.stderr.isatty():
            chosen = _ask_which(min(len(others) + 1, LISTED))
            if chosen:
                print(result.facelets if chosen == 1 else others[chosen - 2].facelets)
                return 0
    return _report(args, result.classification, "photos with the grids found", rotations=result.rotations,
                   alternatives=[a.to_dict() for a in others])


def _scan_face(args: argparse.Namespace) -> int:
    """``scan --face U photo.jpg``: one photo of one face, read on its own
    (the nine stickers as the photo stands, each with its confidence); exit
    0 when every sticker is sure, 1 when some are in doubt."""
    from vision.photos import read_face

    face, photo = args.face
    for opt in ("images", "preview", "config", "sim_state", "use_profile", "save_debug", "photos_as_drawn"):
        if getattr(args, opt, None):
            flag = opt.replace("_", "-").replace("use-", "")
            raise UserError(f"--face reads one photo: --{flag} does not go with it")
    if face not in FACES:
        raise UserError(f"--face {face[:8]!r}: the face is one of U R F D L B (then the photo)")
    reading = read_face(photo, face)
    if args.json:
        print(json.dumps(reading.to_dict()))
    else:
        state = "ok" if reading.ok else "in doubt: " + " ".join(str(i + 1) for i in reading.suspects)
        print(f"{reading.stickers} {state}")
        for row in range(3):
            cells = range(3 * row, 3 * row + 3)
            print(" ".join(reading.stickers[i] for i in cells) + "   "
                  + " ".join(f"{reading.confidence[i]:.2f}" for i in cells))
    for w in reading.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not args.json:
        print(f"the {face} face as the photo stands: which way up it is, the whole cube settles",
              file=sys.stderr)
    return 0 if reading.ok else 1


def _which_way_up(result: PhotoScan) -> str:
    """The cubes the photos fit, numbered, each with the photos that would
    stand otherwise than read and the stickers that then differ."""
    from vision.photos import NET_TOP, PHOTO_EDGES

    count = len(result.alternatives) + 1
    lines = [f"the photos fit {count} cubes, depending on which way up they were taken:",
             f"  1) {result.facelets} as read"]
    for n, a in enumerate(result.alternatives[:LISTED - 1], 2):
        how = ", ".join(f"the {f} photo with the {NET_TOP[f]} side at its {PHOTO_EDGES[a.rotations[f]]}"
                        f" (not its {PHOTO_EDGES[result.rotations[f]]})" for f in a.turned)
        names = " ".join(position_name(i) for i in a.differ[:9]) + (" ..." if len(a.differ) > 9 else "")
        lines.append(f"  {n}) {a.facelets} if {how}: {len(a.differ)} stickers differ ({names})")
    if count > LISTED:
        lines.append(f"  and {count - LISTED} more (--json lists them all): take each photo as the README's"
                     " net draws its face and give --photos-as-drawn")
    return "\n".join(lines)


LISTED = 24
"""Cubes listed at the terminal when the photos fit more (the superflip fits 128)."""


def _ask_which(count: int) -> int:
    """A person at the terminal says which cube is right: its number, or 0
    (Enter, end of input, anything else) for none."""
    print(f"which is the cube? 1 to {count}, or Enter for none: ", end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline(64)  # the prompt on stderr: stdout holds only the cube
    if not line:  # end of input: the line the person would have ended
        print(file=sys.stderr)
    answer = line.strip()
    return int(answer) if answer.isdigit() and 1 <= int(answer) <= count else 0


def _calibrate(args: argparse.Namespace) -> int:
    from vision.profile import TOO_CLOSE_DE, check_name

    from ...app.calibrate import geometry_frame, save_geometry

    if not args.geometry and args.profile is not None:
        check_name(args.profile)  # a name that cannot be saved is refused before anything is captured
    if args.save_debug:
        check_output_dir(args.save_debug, "--save-debug")
    if args.output:
        if not args.geometry:
            raise UserError("--output goes with --geometry (the profile goes to --dir)")
        check_output_file(args.output, "--output")
    if args.dir and not args.geometry:
        check_output_dir(args.dir, "--dir")
    from ...app.calibrate import check_learns_colours
    from ...rig.loading import load_config

    cfg = load_config(args.config)
    if not args.geometry:
        check_learns_colours(cfg.rig.kind)
    cameras, views, _ = load_setup(args, with_profile=False, cfg=cfg)
    if args.geometry:
        from vision.geometry import click_geometry

        by_name = {c.name: c for c in cameras}
        new_views = []
        for v in views:
            if v.hand_held:
                continue  # the on-screen guide is its geometry
            if v.camera not in by_name:
                raise UserError(f"view {v.name!r} uses camera {v.camera!r}, which is not configured")
            simulated = by_name[v.camera].source == "sim"  # a real camera is read in the window itself
            frame = geometry_frame(cameras, v, seed=args.seed) if simulated else None
            new_views.append(click_geometry(by_name[v.camera], v.name, "".join(f.face for f in v.faces),
                                            frame=frame))
        from ...app.calibrate import put_views_in_use

        text = save_geometry(new_views, args.output)
        if args.output:
            print(f"geometry written to {args.output}", file=sys.stderr)
        print(text)
        # in use from the next scan on, as the panel's dragged corners are (stdout stays the TOML)
        print(put_views_in_use(cfg, new_views)[1], file=sys.stderr)
        return 0
    from ...app.calibrate import calibrate_and_use

    done = calibrate_and_use(cfg, args.profile, replace=args.replace, profile_dir=Path(args.dir) if args.dir
                             else None, seed=args.seed, debug_dir=args.save_debug)
    learned = done.learned
    profile = learned.profile
    for line in learned.exposures:
        print(line)
    for face in FACES:
        red, green, blue = profile.face_colors[face]
        print(f"{face}: rgb({red:.0f}, {green:.0f}, {blue:.0f})")
    d, a, b = learned.closest
    print(f"smallest colour difference: {a}-{b} ΔE {d:.1f}")
    if learned.too_close:
        print(f"warning: faces {a} and {b} are too close to tell apart reliably (ΔE {d:.1f} <"
              f" {TOO_CLOSE_DE:g}): improve the light (whiter, more even) and calibrate again",
              file=sys.stderr)
    print(done.message)
    return 0


def register(sub: Registry) -> None:
    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", metavar="FILE", type=path,
                       help="rig configuration (default: the simulated rig)")
        p.add_argument("--seed", type=whole(0, MAX_SEED), default=None,
                       help=f"simulated cameras: cube and light (0 to {MAX_SEED})")
        p.add_argument("--save-debug", metavar="DIR", default=None, type=path,
                       help="write annotated PNGs here")

    p = sub.add_parser("scan", help="capture the configured views and print the facelets")
    common(p)
    p.add_argument("--profile", dest="use_profile", metavar="NAME", type=text("--profile"),
                   help="colour profile to use (a name, or the path of its .json file)")
    p.add_argument("--sim-state", metavar="FACELETS",
                   help="simulated cameras: the cube to show (54 symbols, 'solved', or - for stdin)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--preview", action="store_true", help="show the live preview window to check and fix")
    p.add_argument("--headless", action="store_true", help="never open a window")
    p.add_argument("--images", nargs="+", metavar="FACE=PATH", type=path,
                   help="read six photos instead (one per face, any way up): U=u.jpg R=r.jpg ... or a folder"
                        " with U.jpg R.png ...")
    p.add_argument("--face", nargs=2, metavar=("FACE", "PHOTO"), type=path,
                   help="read one photo of one face (U R F D L B) on its own: its nine stickers as the photo"
                        " stands, each with its confidence, in the usual colour scheme (white up, green"
                        " front, red right)")
    p.add_argument("--photos-as-drawn", action="store_true",
                   help="with --images: every photo was taken with its face standing as the README's net"
                        " draws it (the U face with the B side at the top, D with F at the top, the four"
                        " side faces with U at the top). When turning some photos would make another"
                        " valid cube, the photos as taken are then trusted; without this the scan is in"
                        " doubt and lists the cubes to choose from")
    p.add_argument("--port", metavar="PORT", type=text("port"),
                   help="flipper or two-gripper: the rig that shows the camera the faces (overrides the "
                        "config)")
    p.add_argument("--sim-view", metavar="FILE", type=path,
                   help="flipper or two-gripper: the simulated camera shows the cube that `cuberobot sim-rig "
                        "--sim-view FILE` (the rig on --port, in another process) keeps in FILE")
    p.set_defaults(func=_scan)

    p = sub.add_parser("calibrate", help="learn the colours under today's light from a solved cube,"
                                         " or set the geometry by clicking face corners")
    common(p)
    p.add_argument("--profile", default=None, metavar="NAME", type=text("--profile", 100),
                   help="name of the profile to write and put in use (default: the one the set-up uses, "
                        "else 'default')")
    p.add_argument("--replace", action="store_true",
                   help="overwrite a profile of that name that this set-up does not use (refused otherwise)")
    p.add_argument("--dir", metavar="DIR", type=path,
                   help="directory for the profile (default: the user's data directory,"
                        " ~/.local/share/cuberobot/profiles on Linux)")
    p.add_argument("--geometry", action="store_true",
                   help="click each face's corners in the live image; they are put in use for the set-up "
                        "(its settings file, as the panel's dragged corners) and printed as TOML")
    p.add_argument("--output", metavar="FILE", type=path, help="with --geometry: also write the TOML here")
    p.set_defaults(func=_calibrate)

    p = sub.add_parser("classify", help="read stickers' RGB colours from JSON and name the cube")
    p.add_argument("--rgb-json", nargs="+", required=True, metavar="FILE", type=path,
                   help='files of {"rgb": [[r, g, b] x 54]} in facelet order, null for unseen, or of'
                        ' rubiks-color-resolver\'s {"1": [r, g, b], ..., "54": [r, g, b]}; - for stdin'
                        f" (at most {MAX_INPUT_FILES} files of 1 MiB)")
    p.add_argument("--json", action="store_true", help="one JSON object per file")
    p.add_argument("--min-confidence", type=number(0.0, 1.0), default=0.0, metavar="P",
                   help="stickers under this confidence (0..1) are in doubt too (default 0: the"
                        " classifier's own judgement)")
    p.set_defaults(func=_classify)
