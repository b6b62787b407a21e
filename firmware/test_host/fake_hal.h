#ifndef CUBEROBOT_FAKE_HAL_H
#define CUBEROBOT_FAKE_HAL_H

#include <stdint.h>

#include <deque>
#include <utility>
#include <vector>

struct FakeHal {
  uint64_t ticks = 0;
  uint8_t drivers = 0;
  uint8_t dir[6] = {0, 0, 0, 0, 0, 0};
  uint8_t step_level[6] = {0, 0, 0, 0, 0, 0};
  long steps[6][2] = {};
  long position[6] = {};
  long ignored = 0;
  long double_pulse = 0;
  long dir_during_pulse = 0;
  std::vector<uint64_t> step_ticks[6];
  std::vector<std::pair<uint64_t, int>> enable_log;
  uint8_t button = 0;
  uint8_t estop_input = 0;
  uint8_t led = 0;
  uint8_t reset_cause = 1;
  uint16_t boot_counter = 0;
  long wdt_kicks = 0;
  long inits = 0;
  std::deque<uint8_t> rx;
  uint8_t rx_overflow = 0;
  std::vector<uint8_t> tx;
  /* servo pin writes: (tick, servo * 2 + level) */
  std::vector<std::pair<uint64_t, int>> servo_edges;
  int servo_armed = -1;

  void reset();
};

extern FakeHal fake;

#endif
