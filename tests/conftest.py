"""Test-wide settings, and the one place that says which tests are slow and why.

The suite runs in parallel workers (``./run-tests``: pytest-xdist, two a
core): every worker has its own settings folder (below) and each test its
own tmp_path; what workers share (the solver's cache, firmware/build) is
built under a lock, once, ahead of them (tests/warmup.py). A test never
decides by the clock: it waits for what the rig, the journal or the page
says, with a deadline only as the bound after which it fails.

What is slow (``SLOW``, ``SLOW_FIXTURES``), left out by ``./run-tests
--quick``: the firmware in simavr, Chromium, Xvfb windows, the fuzzers and
soaks (sized down here, full in benchmarks/), cold table builds, the wheel
install, the linters, and the flipper's and two-gripper's heavier runs
through a process or a server. --quick keeps one press-start end to end on
each kind of rig, the solver's properties and the API.

Hypothesis's per-example deadline measures wall time, which on a shared or
loaded CI machine says more about the neighbours than about the code; speed
is measured in benchmarks/, so the deadline is off. Health checks stay on.
"""

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

from robot.sim.protocol_sim import keeping_rigs

settings.register_profile("cuberobot", deadline=None)
settings.load_profile("cuberobot")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the tests' helper modules (fwtools, ptyproxy)

# The settings the panel saves for a set-up file (robot/rig/settings.py) go to the user's config folder,
# which every load_config() reads: the tests' own, so that no test writes the person's, nor reads them.
os.environ["XDG_CONFIG_HOME"] = _config_home = tempfile.mkdtemp(prefix="cuberobot-tests-config-")
atexit.register(shutil.rmtree, _config_home, ignore_errors=True)


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
    "test_solver_memory", "test_lint", "test_start_cfop", "test_solver_damage", "test_wheel", "test_trust",
    "test_web_phone", "test_web_reach", "test_firmware_servo", "test_firmware_overlap",
    "test_web_browser_mechanisms", "test_camera_fuzz",
    # single tests of 4 s or more on a quiet machine
    "test_start::test_start_command_headless",
    "test_gpio_rig::test_start_headless_solves_on_the_mock_pins",
    "test_gpio_rig::test_a_run_killed_mid_job_resumes_as_state_unknown_and_moves_nothing",
    "test_gpio_rig::test_the_panel_solves_on_the_mock_pins",
    "test_gpio_soak",  # three `cuberobot` commands killed with SIGKILL mid-job, each resumed: 7 s
    "test_mechanism_start::test_several_runs_in_process",
    "test_web_mechanisms::test_a_two_gripper_run_stopped_on_the_panel_leaves_the_next_run_free_to_solve",
    "test_mechanism_link_faults",
    "test_mechanism_link::test_kill_9_then_resume_in_a_new_process",
    "test_mechanism_link::test_flipper_runs_on_the_firmware_in_simavr",
    "test_mechanism_link::test_two_gripper_runs_on_the_firmware_in_simavr",
    "test_mechanism_link::test_the_firmware_s_pins_show_a_wrong_move_as_a_fault",
    "test_mechanism_jog::test_a_flipper_jog_on_the_firmware_in_simavr",
    "test_mechanism_scan_cli::test_scan_has_the_rig_show_the_camera_each_face",
    "test_solver_tables::test_prepare_reports_progress_of_a_build_and_nothing_after",
    "test_link_pty::test_solves_ride_out_noise_bursts_stalls_and_a_pulled_cable",
    "test_link_pty::test_a_power_cut_that_takes_the_journals_tail_never_turns_a_face_twice",
    "test_link_pty::test_a_stall_past_the_limit_names_resume_which_then_finishes",
    "test_solver::test_max_length_is_a_promise",
    "test_nxn::test_cli_scramble_apply_show_check_for_every_size",
    "test_cli_stumbles::test_a_table_build_shows_progress_off_a_terminal_and_q_silences_it",
    "test_cli_stumbles::test_save_debug_creates_missing_folders_as_render_does",
    "test_calibrate::test_a_solved_cube_with_a_few_doubtful_stickers_is_accepted_and_they_are_left_out",
    "test_pocket::test_every_htm_answer_solves_its_cube_and_is_optimal",
    "test_rig_render::test_dry_run_render_writes_webm_gif_and_timeline_into_new_folders",
    "test_start::test_doubt_that_stays_is_looked_at_again_after_turning_a_face",
    "test_start::test_start_against_the_real_firmware_in_simavr",
    "test_start::test_a_person_fixes_a_doubtful_scan_through_the_face",
    "test_start::test_an_invalid_fix_is_asked_again_and_a_rescan_captures_again",
    "test_start::test_a_person_has_at_most_max_rescans_new_captures",
    "test_start::test_random_scrambles_end_solved",
    "test_vision_photos::test_scan_images_refuses_bad_photos_in_one_line",
    "test_vision_photo_turns::test_rendered_symmetric_cubes_are_never_read_sure_and_wrong",
    "test_vision_photo_turns::test_scan_images_is_in_doubt_and_lists_the_cubes",
    "test_vision_photo_turns::test_photos_as_drawn_keeps_the_nets_orientation_when_asked",
    "test_vision_photo_turns::test_a_person_at_the_terminal_says_which_cube",
    "test_vision_photo_turns::test_scan_face_prints_the_nine_stickers_and_their_confidence",
    "test_vision_photos::test_six_photos_in_six_lights_read_right_and_sure",
    "test_vision_photos::test_scan_images_prints_the_classify_json",
    "test_vision_cli::test_a_missing_or_misnamed_profile_is_a_user_mistake",
    "test_vision_cli::test_calibrate_saves_into_the_user_data_dir_and_scan_finds_it_by_name",
    "test_vision_cli::test_classify_bad_input",
    "test_web_api::test_serve_with_the_real_firmware_in_simavr",
    "test_web_api::test_a_doubtful_scan_waits_for_an_answer",
    "test_web_api::test_estop_mid_solve_reaches_the_firmware_and_latches",
    "test_web_api::test_stop_and_emergency_stop_mid_solve",
    "test_solver_tables::test_zeroed_pruning_tables_under_a_fresh_hash_are_rebuilt",
    "test_solver_tables::test_probes_catch_damaged_tables",
    "test_calibrate::test_calibration_succeeds_on_a_solved_cube_in_random_light",
    "test_link_pty::test_a_stalled_line_is_waited_for_and_said_so",
    "test_link_pty::test_ctrl_c_stops_the_rig_through_the_pty",
    "test_web_hostile::test_image_bombs_are_refused_from_their_header",
    "test_cfop::test_a_thousand_random_cubes_solved_stage_by_stage",
    "test_start::test_doubtful_scan_is_captured_again_then_solved",
    "test_start::test_hand_held_set_up_scans_face_by_face",
    "test_web_api::test_a_run_by_cfop_labels_each_turn_with_its_stage",
    "test_web_api::test_the_rigs_start_button_starts_a_run",
    # the flipper and two-gripper through the terminal, the panel and the e-stop: a `cuberobot`
    # process or a server per test and whole runs at the rig's pace (5-15 s each on a busy machine);
    # --quick keeps one press-start on each kind (test_mechanism_start::
    # test_start_command_headless_on_each_kind, test_web_mechanisms::
    # test_the_panel_runs_a_mechanism_from_start_to_solved)
    "test_mechanism_floor",  # counts a benchmark's floor: a minute of pure counting
    "test_doctor::test_the_handshake_on_a_flipper_or_two_gripper_rig",
    "test_mechanism_dry_run::test_ctrl_c_during_a_dry_run_on_the_rig_latches_it",
    "test_mechanism_estop::test_a_jammed_virtual_part_is_not_said_cleared",
    "test_mechanism_estop::test_a_runs_emergency_stop_goes_onto_its_line",
    "test_mechanism_estop::test_ctrl_c_during_a_run_at_the_terminal_latches_the_rig",
    "test_mechanism_estop::test_the_estop_command_latches_and_clears_a_flipper_or_two_gripper_rig",
    "test_mechanism_estop::test_the_stop_reaches_a_jog_latches_the_rig_and_clear_clears_it",
    "test_mechanism_jog::test_jog_waits_for_an_unfinished_job_to_be_resumed",
    "test_mechanism_jog::test_the_readmes_servo_finding_step_works_on_cubotino",
    "test_mechanism_journal::test_power_cut_soak",
    "test_mechanism_link::test_a_bad_sim_view_and_a_six_motor_sim_view_are_one_line_errors",
    "test_mechanism_link::test_resume_in_a_new_process_takes_the_rig_s_word_and_otherwise_moves_nothing",
    "test_mechanism_scan::test_scan_solve_turn_confirm_on_the_virtual_rig",
    "test_mechanism_scan_cli::test_scan_then_start_on_one_rig_from_the_terminal",
    "test_mechanism_search::test_the_bounds_on_what_is_left_are_the_least_any_moves_cost",
    "test_mechanism_start::test_a_scans_robot_moves_are_told_with_the_cube_as_the_rig_holds_it",
    "test_mechanism_start::test_the_run_turns_the_searchs_plan_when_it_beats_every_candidate",
    "test_mechanism_start::test_the_terminals_progress_line_leaves_nothing_of_a_longer_line_before_it",
    "test_typed_steps::test_start_plans_each_candidate_once_and_turns_the_winners_plan",
    "test_typed_steps::test_start_turns_and_journals_the_plan_it_estimated",
    "test_web_jog::test_a_flipper_jogs_by_robot_moves_from_its_home",
    "test_web_jog::test_the_pages_cube_follows_a_jog_from_where_the_run_left_the_rig",
    "test_web_jog::test_the_servo_finding_step_works_on_a_cubotino_in_the_jog_card",
    "test_web_mechanisms::test_a_doubtful_scan_is_put_to_the_person_on_the_page",
    "test_web_mechanisms::test_a_run_tells_its_face_every_robot_move_with_the_orientation",
    "test_web_mechanisms::test_a_stop_ends_the_run_between_two_moves_with_the_journal_whole",
    "test_web_mechanisms::test_the_dry_run_command_on_each_kind",
    "test_web_mechanisms::test_the_panel_stops_a_mechanism_run_between_robot_moves",
    "test_one_request::test_max_length_set_in_a_flippers_file_bounds_its_start_from_the_terminal",
    "test_one_request::test_max_length_bounds_a_mechanism_run_as_it_bounds_six_motors",
    "test_one_request::test_every_kind_a_config_may_name_has_its_seam",
    "test_resume",  # a sim-rig process and a job cut twice: 4 s each
    # a `serve` process against a crowd of 1,100 (or 40 out-of-files) slow clients in a process of its own
    "test_web_hostile_slow::test_the_estop_is_answered_within_100_ms_beside_1100_slow_clients_at_1024_files",
    "test_web_hostile_slow::test_out_of_files_is_one_line_a_second_and_the_estop_still_gets_in",
}
"""Test modules (file stems) or single tests ("stem::name") that take tens of
seconds or more: marked ``slow`` here, in one place, and left out by
``./run-tests --quick`` (``-m "not slow"``), the everyday subset; the full
suite runs them all."""


TIMING = {
    "test_trust::test_a_rig_that_talks_but_never_answers_is_given_up_within_the_reply_limit",
    "test_trust::test_ctrl_c_and_the_estop_command_reach_a_talking_rig_within_100_ms",
    "test_trust::test_the_panels_estop_reaches_a_talking_rig_within_100_ms_and_serve_ends_in_2_s",
    "test_trust::test_a_journal_that_is_not_a_journal_file_is_one_line_within_a_second",
    "test_trust::test_serve_ends_within_2_s_of_ctrl_c_whatever_the_run_is_doing",
    "test_web_hostile_slow::test_the_estop_is_answered_within_100_ms_beside_1100_slow_clients_at_1024_files",
    "test_command_cameras::test_a_silent_camera_ends_the_scan_within_its_timeout",
}
"""Tests of a promise in wall-clock time (an e-stop on the rig's line within
100 ms, serve gone within 2 s of Ctrl-C): marked ``timing``, and run by
``./run-tests`` on their own after the parallel part, so that what they time
is the product, not four workers' crowd on two cores."""

SLOW_FIXTURES = {
    "browser": "a real Chromium (seconds to start, seconds a page)",
    "elf": "the firmware built and run in simavr, which emulates every cycle of the board",
    "firmware_elf": "the firmware built and run in simavr",
    "display": "Xvfb and a real OpenCV window, driven by xdotool",
}
"""Tests are slow by what they use, whatever their module: a test that asks
for one of these fixtures is marked slow too."""


LONGEST = [
    "test_first_run::test_the_first_run_shows_progress_until_the_first_solve_and_verbose_stays_under_200_lines",
    "test_wheel::test_a_wheel_installs_into_a_fresh_venv_and_runs_start_and_firmware_build",
    "test_solver_tables::test_prepare_reports_progress_of_a_build_and_nothing_after",
    "test_web_browser_mechanisms::test_the_page_draws_the_cube_as_the_rig_holds_it",
    "test_web_mechanisms::test_the_panel_runs_and_jogs_a_flipper_on_the_firmware",
    "test_trust::test_two_dry_runs_on_one_folder_and_the_winner_killed_stays_resumable",
    "test_solver_tables::test_zeroed_pruning_tables_under_a_fresh_hash_are_rebuilt",
]
"""The tests of 20 s or more in a quiet full run (2026-12-06), longest
first. In a parallel run they are the first each worker takes (see
_spread_the_longest): in collection order they came last (test_wheel,
test_trust) and one worker ran them alone while the others had finished."""


def pytest_collection_modifyitems(config, items):
    for item in items:
        stem = item.path.stem
        if (stem in SLOW or f"{stem}::{item.originalname}" in SLOW
                or SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.slow)
        if f"{stem}::{item.originalname}" in TIMING:
            item.add_marker(pytest.mark.timing)


class _SpreadTheLongest:
    """A plugin of one hook, so that it runs after -m has deselected (what
    is left is what runs); registered in a worker by pytest_configure."""

    def __init__(self, workers: int):
        self.workers = workers

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items):
        items[:] = _spread_the_longest(items, self.workers)


def _spread_the_longest(items: list, workers: int) -> list:
    """The collection with the LONGEST tests moved to where pytest-xdist's
    first hand-out gives one to each worker: it hands each worker a run of
    ``len(items) // workers // 4`` consecutive tests to begin with, then
    more as they finish. Every worker computes the same order, as xdist
    requires. (Should xdist hand out otherwise, this is only an order.)"""
    rank = {name: i for i, name in enumerate(LONGEST)}
    longest = sorted((it for it in items if f"{it.path.stem}::{it.originalname}" in rank),
                     key=lambda it: rank[f"{it.path.stem}::{it.originalname}"])
    rest = [it for it in items if f"{it.path.stem}::{it.originalname}" not in rank]
    chunk = max(2, len(items) // workers // 4)
    # the i-th longest goes to worker i % workers, as its (i // workers)-th test
    at = {(i % workers) * chunk + i // workers: item for i, item in enumerate(longest)}
    if not at or max(at) >= len(items):  # a few tests picked by hand: their order as given
        return items
    rest.reverse()
    return [at[k] if k in at else rest.pop() for k in range(len(items))]


_warmup: subprocess.Popen | None = None


def _warm_up(config) -> None:
    """In a parallel run, the controller (not a worker) runs tests/warmup.py:
    the solver's tables and compiled searches before the workers start (a
    few seconds, or about 30 in a fresh checkout, where numba compiles
    anew), the test modules' collection beside it, the firmware in the
    background beside the first tests."""
    global _warmup
    parallel = getattr(config.option, "numprocesses", None)
    if hasattr(config, "workerinput") or not parallel or config.option.collectonly:
        return
    script = str(Path(__file__).with_name("warmup.py"))
    # Beside it, on the other core: the test modules collected once, which
    # leaves pytest's rewritten modules in __pycache__ for the workers to
    # load (rewriting them is most of a collection, 5 s of CPU in each of
    # four workers otherwise); not where bytecode is not written.
    collect = None
    if not sys.dont_write_bytecode:
        collect = subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
                                    "-p", "no:cacheprovider", *config.args], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=config.rootpath)
    subprocess.run([sys.executable, script, "solver"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   timeout=600, check=False)
    if collect is not None:
        try:
            collect.wait(timeout=120)
        except subprocess.TimeoutExpired:
            collect.kill()
            collect.wait()
    _warmup = subprocess.Popen([sys.executable, script, "firmware"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL)


def pytest_unconfigure(config):
    if _warmup is not None and _warmup.poll() is None:
        _warmup.kill()
        _warmup.wait()


def pytest_configure(config):
    _warm_up(config)
    workers = getattr(config, "workerinput", {}).get("workercount")
    if workers:
        config.pluginmanager.register(_SpreadTheLongest(workers), "cuberobot-spread-the-longest")
    config.addinivalue_line("markers", "rigs_as_in_production: virtual rigs live only while held")
    config.addinivalue_line("markers", "slow: takes tens of seconds or more; left out by ./run-tests --quick")
    config.addinivalue_line("markers", "timing: times a promise of the product in wall-clock time; "
                                       "./run-tests runs these on their own, after the rest")
    # A suite started in the background by a shell without job control inherits Ctrl-C ignored, and
    # so would every command it starts: the tests of what Ctrl-C does would fail for the launch, not
    # the code. Python's own handler restored here; the commands started from it then get Ctrl-C.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (tests/chromium.py), skipped
    where Debian's chromium and chromium-driver are missing."""
    from chromium import HAS_BROWSER, start_browser

    if not HAS_BROWSER:
        pytest.skip("needs Debian's chromium and chromium-driver (./run-tests installs them)")
    driver = start_browser()
    try:
        yield driver
    finally:
        driver.quit()


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
