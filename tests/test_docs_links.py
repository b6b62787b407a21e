"""The README and docs/ hold together: the README stays a front page (at
most 250 lines); every relative link and ``#anchor``
in README.md and docs/*.md points at a file that exists and, into Markdown,
at a heading that exists (as GitHub makes a heading's anchor); and every
``cuberobot`` command the README writes is one the command line accepts:
the commands of its code blocks are parsed whole by the CLI's own argparse
parser, in this process, and every ``cuberobot WORD`` in the inline code of
the README and the docs is a real command (and action, for those that have
actions).

No network, no processes: a fraction of a second. The checker is tested on
made-up pages too, so a broken link or anchor is known to fail it."""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
INLINE_LINK = re.compile(r"\]\(\s*<?([^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
HTML_LINK = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")
HTML_ID = re.compile(r"""<a\s[^>]*(?:name|id)\s*=\s*["']([^"']+)["']""")
SCHEME = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")
SHELL_BLOCKS = {"", "sh", "bash", "shell", "console"}


def split_fences(text: str) -> tuple[list[str], list[tuple[int, str, list[str]]]]:
    """The page's lines with those inside fenced code blocks blanked (so
    line numbers stay), and the blocks: (first line's number, language,
    lines)."""
    prose: list[str] = []
    blocks: list[tuple[int, str, list[str]]] = []
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            blocks.append((number + 1, m.group(2).lower(), []))
            prose.append("")
        elif fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and not line.strip().strip(fence[0]):
                fence = None
            else:
                blocks[-1][2].append(line)
            prose.append("")
        else:
            prose.append(line)
    return prose, blocks


def blank_code_spans(text: str) -> str:
    """``text`` with its inline code (which may run over a line break)
    replaced by spaces, newlines kept: a link written in code is no link."""
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: links and images by their text,
    lower case, punctuation dropped (hyphens and underscores kept), each
    space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page has: its headings' (``-1``, ``-2`` after a
    repeat, as GitHub numbers them) and its HTML ids and names."""
    prose, _ = split_fences(text)
    found: set[str] = set()
    seen: dict[str, int] = {}
    previous = ""
    for line in prose:
        m = ATX.match(line)
        heading = m.group(2) if m else None
        if heading is None and SETEXT.match(line) and previous.strip() and "|" not in previous:
            heading = previous.strip()
        if heading is not None:
            base = slug(heading.strip())
            count = seen.get(base, 0)
            found.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
        previous = line
    found.update(HTML_ID.findall(text))
    return found


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every link and image outside code."""
    prose, _ = split_fences(text)
    body = blank_code_spans("\n".join(prose))
    out = []
    for pattern in (INLINE_LINK, REFERENCE, HTML_LINK):
        for m in pattern.finditer(body):
            out.append((body.count("\n", 0, m.start(1)) + 1, m.group(1)))
    return sorted(out)


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with ``page``'s relative links, one line each."""
    text = page.read_text(encoding="utf-8")
    problems = []
    for line, target in links(text):
        if not target or SCHEME.match(target):
            continue
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        name = f"{page.relative_to(root)}:{line}: {target}"
        if not where.exists():
            problems.append(f"{name}: no file {path}")
        elif not str(where).startswith(str(root.resolve())):
            problems.append(f"{name}: points outside the repository")
        elif anchor and where.suffix == ".md":
            if anchor not in anchors(where.read_text(encoding="utf-8")):
                problems.append(f"{name}: no heading with the anchor #{anchor} in {where.name}")
    return problems


def test_the_readme_is_a_front_page_of_at_most_250_lines():
    """Issue 48: what a maker follows in one sitting; the manual is in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move the detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(page):
    assert broken_links(page) == []


def test_the_checker_finds_a_broken_file_link_and_a_broken_anchor(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "hw.md").write_text(
        '# Hardware\n\n## Flipper rig (`[rig] kind = "flipper"`)\n\n## Parts\n\n## Parts\n\n'
        "Setext heading\n--------------\n\n```\n# not a heading\n```\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/hw.md) [ok](docs/hw.md#flipper-rig-rig-kind--flipper) [ok](docs/hw.md#parts-1)\n"
        "[ok](docs/hw.md#setext-heading) ![ok](docs/hw.md) [web](https://example.com/nope.md)\n"
        "[gone](docs/gone.md) [bad anchor](docs/hw.md#not-a-heading)\n"
        "`[in code](docs/gone.md)` [self](#missing) [parts twice](docs/hw.md#parts-2)\n")
    found = broken_links(tmp_path / "README.md", tmp_path)
    assert [p.split(": ", 1)[1] for p in found] == [
        "docs/gone.md: no file docs/gone.md",
        "docs/hw.md#not-a-heading: no heading with the anchor #not-a-heading in hw.md",
        "#missing: no heading with the anchor #missing in README.md",
        "docs/hw.md#parts-2: no heading with the anchor #parts-2 in hw.md",
    ], found
    assert found[0].startswith("README.md:3: ")


def test_anchors_are_made_as_github_makes_them():
    assert slug("CUBOTino on the Pi's pins (`port = \"gpio://\"`)") == "cubotino-on-the-pis-pins-port--gpio"
    assert slug("3.3 How a job ends") == "33-how-a-job-ends"
    assert slug("`[[camera]]`: one table per camera") == "camera-one-table-per-camera"
    assert slug("Colours and the sticker grid (every kind)") == "colours-and-the-sticker-grid-every-kind"
    assert slug("See [the API](api.md) now") == "see-the-api-now"


# The command line ------------------------------------------------------------------------------------------


@functools.cache
def _parser() -> argparse.ArgumentParser:
    from robot.cli.main import build_parser

    return build_parser()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps its subparsers here and nowhere public
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def shell_commands(lines: list[str]) -> list[str]:
    """The ``cuberobot`` commands of a shell code block, in order: lines
    joined where they end in a backslash, comments dropped, split at ``&&``,
    ``||``, ``;`` and ``|``, ``VAR=value`` before a command left out."""
    joined = re.sub(r"\\\n", " ", "\n".join(lines))
    out = []
    for line in joined.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # an open quote: a command of ours is kept whole, for parse_error to refuse
            if re.search(r"(?:^|[\s;&|])cuberobot\s", line):
                out.append(line.strip())
            continue
        words: list[str] = []
        skip = False
        for token in [*tokens, ";"]:
            if skip or token in (">", ">>", "<"):  # a redirection and its file are the shell's
                skip = not skip
                continue
            if token not in ("&&", "||", ";", "|", "&"):
                words.append(token)
                continue
            while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
                words = words[1:]
            if words and words[0] == "cuberobot":
                out.append(shlex.join(words))
            words = []
    return out


def readme_commands(text: str) -> list[str]:
    _, blocks = split_fences(text)
    return [c for _, lang, lines in blocks if lang in SHELL_BLOCKS for c in shell_commands(lines)]


def parse_error(parser: argparse.ArgumentParser, command: str) -> str | None:
    """Why the command line refuses ``command``, or None when it takes it."""
    try:
        argv = shlex.split(command)[1:]
    except ValueError as e:
        return f"not a command a shell can split: {e}"
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit as e:
        if e.code not in (0, None):
            return said.getvalue().strip() or f"exit {e.code}"
    return None


def unknown_names(parser: argparse.ArgumentParser, text: str) -> list[str]:
    """``cuberobot WORD [ACTION]`` in the inline code of ``text`` that names
    no command, or no action of a command that has actions."""
    commands = _subcommands(parser)
    prose, _ = split_fences(text)
    bad = []
    for span in CODE_SPAN.finditer("\n".join(prose)):
        words = span.group(2).split()
        for i, word in enumerate(words[:-1]):
            if word != "cuberobot" or not re.fullmatch(r"[a-z][a-z0-9-]*", words[i + 1]):
                continue
            name = words[i + 1]
            if name not in commands:
                bad.append(f"cuberobot {name}")
                continue
            actions = _subcommands(commands[name])
            after = words[i + 2] if i + 2 < len(words) else ""
            if actions and re.fullmatch(r"[a-z][a-z0-9-]*", after) and after not in actions:
                bad.append(f"cuberobot {name} {after}")
    return bad


def test_every_command_in_the_readmes_code_blocks_is_one_the_command_line_takes():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = readme_commands(text)
    assert len(commands) >= 3, commands  # the quick start's at least
    parser = _parser()
    refused = {c: why for c in commands if (why := parse_error(parser, c))}
    assert refused == {}


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "benchmarks-history.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_the_inline_code_names_is_real(page):
    """In the README and the docs (but the benchmarks' history, a log of
    earlier rounds in their own words)."""
    assert unknown_names(_parser(), page.read_text(encoding="utf-8")) == []


def test_the_command_checks_find_a_wrong_command_and_a_wrong_option():
    page = ("Run `cuberobot strat --headless` or `cuberobot firmware flsh`, not `cuberobot`.\n\n"
            "```sh\n"
            "GPIOZERO_PIN_FACTORY=mock cuberobot start --headless   # a comment\n"
            "cuberobot serve --prot 8080 && cuberobot doctor \\\n  --json\n"
            "cd cuberobot && echo cuberobot start\n"
            "cuberobot scan --json > cube.json\n"
            "cuberobot jog 'servo cover 95 --config x.toml\n"
            "```\n")
    commands = readme_commands(page)
    assert commands == ["cuberobot start --headless", "cuberobot serve --prot 8080",
                        "cuberobot doctor --json", "cuberobot scan --json",
                        "cuberobot jog 'servo cover 95 --config x.toml"]
    parser = _parser()
    assert [parse_error(parser, c) is None for c in commands] == [True, False, True, True, False]
    assert "No closing quotation" in (parse_error(parser, commands[4]) or "")
    assert "--prot" in (parse_error(parser, commands[1]) or "")
    assert unknown_names(parser, page) == ["cuberobot strat", "cuberobot firmware flsh"]
