/* The move queue and the step generator (docs/protocol.md section 4).
 *
 * motion_tick() runs once per 40 us tick from the timer interrupt; the main
 * loop pushes moves and collects completions. Shared indices are only
 * changed with interrupts masked or from the interrupts themselves.
 */
#ifndef CUBEROBOT_MOTION_H
#define CUBEROBOT_MOTION_H

#include <stdint.h>
#include "constants.h"
#include "pins.h"

struct MotorConfig {
  uint32_t vmax;
  uint32_t accel;
  uint32_t vmin;
  uint16_t settle_ms;
};

enum { PH_ACCEL = 0, PH_CRUISE = 1, PH_DECEL = 2 };

/* One motor's digital differential analyser for one move. */
struct Chan {
  uint32_t v;
  uint32_t acc;
  uint32_t vmax;
  uint32_t accel;
  uint32_t vmin;
  uint16_t n;
  uint16_t done;
  uint16_t ramp;
  uint8_t phase;
  uint8_t motor;
  uint8_t bit; /* 1 << motor */

  void start(uint16_t steps, const MotorConfig &cfg);
  /* One tick of the profile; returns 1 when a step pulse is due. */
  uint8_t tick() __attribute__((always_inline));
  uint8_t finished() const { return done == n; }
};

/* Duration in ticks of one motor's move (the host's timing model). */
uint32_t profile_ticks(uint16_t n, const MotorConfig &cfg);

struct MoveCmd {
  uint16_t id;
  uint8_t motor_a;
  int16_t steps_a;
  uint8_t motor_b;
  int16_t steps_b;
  uint16_t overlap;
};

struct DoneRecord {
  uint16_t id;
  uint32_t ticks;
};

void motion_init(void);
void motion_configure(uint8_t motor, const MotorConfig &cfg);
uint8_t motion_configured(uint8_t motor);
uint8_t motion_all_configured(void);
uint8_t motion_queue_len(void);
uint8_t motion_queue_free(void);
uint8_t motion_push(const MoveCmd &cmd); /* 0 when full */
void motion_tick(void);                  /* tick interrupt */
void motion_stop(void);                  /* emergency: drop everything now */
uint8_t motion_pop_done(DoneRecord *out);
uint16_t motion_active_id(void);
uint16_t motion_last_done_id(void);
uint8_t motion_done_lost(void);

#endif
