"""Test-wide settings.

Hypothesis's per-example deadline measures wall time, which on a shared or
loaded CI machine says more about the neighbours than about the code; speed
is measured in benchmarks/, so the deadline is off. Health checks stay on.
"""

import sys
from pathlib import Path

import pytest
from hypothesis import settings

from robot.sim.protocol_sim import keeping_rigs

settings.register_profile("cuberobot", deadline=None)
settings.load_profile("cuberobot")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests' helper modules (fwtools, ptyproxy)


@pytest.fixture(autouse=True)
def _virtual_rigs_kept_for_the_test(request):
    """The virtual rigs a test makes outlive their ports until the test ends,
    so that it can look at them afterwards (in the product a rig lives as
    long as whoever holds it). A test marked ``rigs_as_in_production`` opts out."""
    if request.node.get_closest_marker("rigs_as_in_production"):
        yield
        return
    with keeping_rigs():
        yield


SLOW = {
    # whole modules: the firmware in simavr, real browsers and windows, fuzzing, cold table builds,
    # the linters over the whole tree
    "test_first_run", "test_firmware_build", "test_firmware_cli", "test_firmware_faults", "test_firmware_sim",
    "test_link_faults", "test_web_browser", "test_web_hostile_fuzz", "test_cli_fuzz", "test_preview_window",
    "test_solver_memory", "test_lint", "test_start_cfop", "test_solver_damage", "test_wheel",
}
"""Test modules (file stems) or single tests ("stem::name") that take tens of
seconds or more: marked ``slow`` here, in one place, and left out by
``./run-tests --quick`` (``-m "not slow"``), the everyday subset; the full
suite runs them all."""


def pytest_collection_modifyitems(config, items):
    for item in items:
        stem = item.path.stem
        if stem in SLOW or f"{stem}::{item.originalname}" in SLOW:
            item.add_marker(pytest.mark.slow)


def pytest_configure(config):
    config.addinivalue_line("markers", "rigs_as_in_production: virtual rigs live only while held")
    config.addinivalue_line("markers", "slow: takes tens of seconds or more; left out by ./run-tests --quick")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One panel server for a test module (tests/webserver.py): (base url, panel, rig url)."""
    from webserver import panel_server

    with panel_server(tmp_path_factory.mktemp("state")) as s:
        yield s


@pytest.fixture
def client(served):
    """A client of the module's panel server."""
    from webserver import Client

    return Client(served[0])
