/* Hobby servo pulses; see servo.h for the timing scheme. */
#include "servo.h"
#include "hal.h"

enum { SV_IDLE = 0, SV_RISE_PENDING = 1, SV_HIGH = 2 };

static uint16_t lo_us[CR_SERVOS], hi_us[CR_SERVOS];
static volatile uint16_t pulse_us[CR_SERVOS]; /* 0: no pulse yet */
/* Worked out when a pulse is set, not in the interrupts (no divider): */
static uint16_t rise_at[CR_SERVOS];   /* the cycle in the tick its rise goes to */
static uint8_t first[CR_SERVOS];      /* counts from the rise to the next match */
static uint8_t matches[CR_SERVOS];    /* compare matches from the rise to the fall */
static uint8_t configured;
static uint8_t slot_left, slot; /* ticks left in the slot under way; its number */
static volatile uint8_t state, current;
static uint8_t due; /* the current servo's slot has come: its pulse is owed */
static uint8_t matches_left;   /* compare matches until the fall */
static uint8_t second_shift;   /* a counter move still owed (short first stretch) */

void servo_init(void) {
  configured = 0;
  slot_left = CR_SERVO_SLOT_TICKS;
  slot = 0;
  state = SV_IDLE;
  due = 0;
  for (uint8_t i = 0; i < CR_SERVOS; i++) pulse_us[i] = 0;
}

uint8_t servo_configure(uint8_t servo, uint16_t min_us, uint16_t max_us) {
  if (servo >= CR_SERVOS || min_us < CR_SERVO_MIN_US || max_us > CR_SERVO_MAX_US || min_us >= max_us) return 0;
  uint8_t s = hal_irq_save();
  lo_us[servo] = min_us;
  hi_us[servo] = max_us;
  /* A pulse held from before stays only if the new limits allow it. */
  if (pulse_us[servo] && (pulse_us[servo] < min_us || pulse_us[servo] > max_us)) pulse_us[servo] = 0;
  configured |= (uint8_t)(1 << servo);
  hal_irq_restore(s);
  return 1;
}

uint8_t servo_configured(uint8_t servo) { return servo < CR_SERVOS && ((configured >> servo) & 1); }

uint8_t servo_allows(uint8_t servo, uint16_t us) {
  return servo_configured(servo) && us >= lo_us[servo] && us <= hi_us[servo];
}

/* The rise for a pulse whose length is d cycles past whole ticks. */
static uint16_t rise_for(uint16_t d) {
  /* Both edges in this tick's window, or the fall at its start in a later one. */
  if (d < CR_SERVO_EDGE_TO - CR_SERVO_EDGE_FROM) return CR_SERVO_EDGE_FROM;
  return (uint16_t)(CR_SERVO_EDGE_FROM + CR_TICK_CYCLES - d);
}

void servo_set(uint8_t servo, uint16_t us) {
  if (!servo_allows(servo, us)) return;
  /* Called from the tick interrupt, so no division (the AVR has no divider,
   * and a 32-bit remainder there, hundreds of cycles, once made the first
   * pulse of a servo in flight a period too long): counts = PERIOD q + r by
   * subtraction (q <= 21), and its remainder in ticks from that, as a
   * period is 3 ticks and 10 counts. */
  uint16_t r = (uint16_t)(us * 2);
  uint8_t q = 0;
  while (r >= CR_SERVO_PERIOD) {
    r = (uint16_t)(r - CR_SERVO_PERIOD);
    q++;
  }
  const uint16_t tick_counts = CR_TICK_CYCLES / CR_SERVO_CYCLES_PER_COUNT;
  uint16_t rem = (uint16_t)(r + q * (CR_SERVO_PERIOD % tick_counts));
  while (rem >= tick_counts) rem = (uint16_t)(rem - tick_counts);
  rise_at[servo] = rise_for((uint16_t)(rem * CR_SERVO_CYCLES_PER_COUNT));
  first[servo] = (uint8_t)r;
  matches[servo] = (uint8_t)(q + 1);
  pulse_us[servo] = us;
}

#if 2 * (CR_SERVO_EDGE_TO - CR_SERVO_EDGE_FROM) < CR_TICK_CYCLES
#error "the servo edges' window must be at least half a tick, or some widths have no place"
#endif

void servo_tick(void) {
  /* Counted down, not divided: the AVR has no divider, and a division
   * every tick would cost a third of the tick. */
  if (--slot_left == 0) {
    slot_left = CR_SERVO_SLOT_TICKS;
    if (++slot == CR_SERVO_FRAME_TICKS / CR_SERVO_SLOT_TICKS) slot = 0;
    if (slot < CR_SERVOS && pulse_us[slot]) {
      current = slot;
      due = 1;
    }
  }
  if (state != SV_IDLE || !due) return;
  uint16_t rise = rise_at[current];
  uint16_t now = hal_tick_cycle();
  /* A tick that began late (the one before ran long) is too far on to
   * place the rise: the next tick does, 40 us later. */
  if (rise <= now + 2 * CR_SERVO_CYCLES_PER_COUNT) return;
  due = 0;
  state = SV_RISE_PENDING;
  hal_servo_timer_start((uint8_t)((rise - now) / CR_SERVO_CYCLES_PER_COUNT));
}

void servo_timer_isr(void) {
  if (state == SV_RISE_PENDING) {
    hal_servo_pin(current, 1);
    state = SV_HIGH;
    uint8_t r = first[current];
    matches_left = matches[current];
    if (r >= CR_SERVO_MARGIN) {
      second_shift = 0;
      hal_servo_timer_shift((uint8_t)(CR_SERVO_PERIOD - r)); /* next match r counts after the rise */
    } else {
      /* Too short a first stretch to move the counter in time: half a
       * period first, then the rest of it plus r. */
      hal_servo_timer_shift(CR_SERVO_PERIOD / 2);
      second_shift = (uint8_t)(CR_SERVO_PERIOD / 2 - r);
    }
    return;
  }
  if (state != SV_HIGH) {
    hal_servo_timer_stop();
    return;
  }
  if (--matches_left == 0) {
    hal_servo_pin(current, 0);
    hal_servo_timer_stop();
    state = SV_IDLE;
    return;
  }
  if (second_shift) {
    hal_servo_timer_shift(second_shift);
    second_shift = 0;
  }
}
