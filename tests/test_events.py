"""The events' one definition (robot/app/events.py EVENTS): every event made
is checked against it, and the docs' table, the API's schema and the page's
handlers all agree with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from webserver import Client, panel_server

from robot.app.events import EVENTS, STATES, Event, EventError, TurnEvents, schema

ROOT = Path(__file__).resolve().parent.parent
COMMON = {"kind", "state", "t", "text", "run", "seq"}


def test_events_are_checked_when_made():
    Event("turn-started", "turning", {"index": 0, "turns": 3, "step": "R"})
    for kind, state, data in (("teleported", "idle", {}),
                              ("turn-started", "flying", {"index": 0, "turns": 3, "step": "R"}),
                              ("turn-started", "turning", {"index": 0, "turns": 3}),
                              ("turn-started", "turning", {"index": 0, "turns": 3, "step": "R", "colour": 1}),
                              ("turn-started", "turning", {"index": "0", "turns": 3, "step": "R"}),
                              ("connected", "idle", {"port": "x", "simulated": 1, "firmware": "f"})):
        with pytest.raises(EventError):
            Event(kind, state, data)


def test_a_jobs_turn_events_carry_what_the_definition_says():
    events = TurnEvents(["R", "U D'"], 1.0, ["cross", "F2L 1"])
    started, done = events.started(1), events.done(1, "URFDLB" * 9, None)
    assert started.data == {"index": 1, "turns": 2, "step": "U D'", "stage": "F2L 1"}
    assert done.data["ticks"] is None and done.data["remaining_s"] <= 1.0


def test_the_docs_table_names_every_kind_and_field():
    text = (ROOT / "docs" / "api.md").read_text()
    rows = dict(re.findall(r"^\| `([a-z-]+)` \| (.+) \|$", text, re.M))
    for kind, spec in EVENTS.items():
        assert kind in rows, kind
        for name in [*spec.required, *spec.optional]:
            assert f"`{name}`" in rows[kind], (kind, name)


def test_the_pages_handlers_read_only_defined_kinds_and_fields():
    js = "\n".join(p.read_text() for p in (ROOT / "robot" / "web" / "static").glob("*.js"))
    start = js.index("function onEvent(")
    body = js[start:js.index("\n}\n", start)]
    cases = re.split(r'\n\s*case "', body)[1:]
    assert cases, "no event handlers found"
    for case in cases:
        kind = case[:case.index('"')]
        assert kind in EVENTS, kind
        spec = EVENTS[kind]
        read = set(re.findall(r"\be\.(\w+)", case))
        assert read <= COMMON | set(spec.required) | set(spec.optional), (kind, read)


def test_the_api_serves_the_definition(tmp_path):
    with panel_server(tmp_path / "state") as (base, panel, rig_url):
        status, body, _ = Client(base).get("/api/events/schema")
    assert status == 200 and body == schema()
    assert body["states"] == list(STATES) and set(body["kinds"]) == set(EVENTS)
    assert body["kinds"]["turn-done"]["required"]["ticks"] == ["null", "number"]
