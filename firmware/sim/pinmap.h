/* The harness's view of firmware/cuberobot/pins.h, one table per board. */
#ifndef CUBEROBOT_SIM_PINMAP_H
#define CUBEROBOT_SIM_PINMAP_H

#include <stdint.h>

struct pinmap {
  const char *board;
  char step_port;
  uint8_t step_bit[6];
  char dir_port[6];
  uint8_t dir_bit[6];
  char en_port, button_port, estop_port, led_port;
  uint8_t en_bit, button_bit, estop_bit, led_bit;
};

extern const struct pinmap pinmap_uno;
extern const struct pinmap pinmap_mega;

#endif
