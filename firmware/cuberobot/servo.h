/* Hobby servos for the flipper and two-gripper rigs (docs/protocol.md 7).
 *
 * Each configured servo gets a pulse every 20 ms frame, one servo after
 * another in its own 4 ms slot, so only one pulse is ever in flight.
 *
 * The edges come from Timer2's compare interrupt, with its TOP fixed at
 * 250 counts (125 us at 0.5 us a count) so that the timer is never
 * reconfigured: a pulse is placed by moving the counter (TCNT2) relative to
 * where it stands, which does not depend on how late an interrupt ran. The
 * rise is placed so that both edges fall late in the steppers' 40 us tick,
 * after the tick interrupt has finished: an edge never waits behind the
 * steppers' work. The tick interrupt only starts a pulse; it never waits.
 */
#ifndef CUBEROBOT_SERVO_H
#define CUBEROBOT_SERVO_H

#include <stdint.h>

#define CR_SERVOS 3
#define CR_SERVO_MIN_US 400  /* the widest range any hobby servo takes */
#define CR_SERVO_MAX_US 2600
#define CR_SERVO_FRAME_TICKS 500 /* 20 ms */
#define CR_SERVO_SLOT_TICKS 100  /* 4 ms between two servos' pulses */
#define CR_TICK_CYCLES 640       /* CPU cycles per 40 us tick */
#define CR_SERVO_PERIOD 250      /* Timer2 counts between its compare matches */
#define CR_SERVO_CYCLES_PER_COUNT 8
/* Cycles at the start of a tick that belong to the tick interrupt: no edge
 * is placed before this one. Both edges fit in the rest of the tick,
 * whatever the width, as long as this is under half a tick. */
#define CR_SERVO_EDGE_FROM 300
/* The smallest first stretch after the rise, in counts: the rise interrupt
 * must move the counter before it gets there. */
#define CR_SERVO_MARGIN 24

void servo_init(void);
uint8_t servo_configure(uint8_t servo, uint16_t min_us, uint16_t max_us); /* 0: bad limits */
uint8_t servo_configured(uint8_t servo);
uint8_t servo_allows(uint8_t servo, uint16_t pulse_us);
void servo_set(uint8_t servo, uint16_t pulse_us); /* from the tick interrupt (a queued SERVO) */
void servo_tick(void);                            /* tick interrupt, first thing */
void servo_timer_isr(void);                       /* Timer2's compare interrupt */

/* Where in a tick (in cycles) a pulse of `cycles` may rise so that both its
 * edges fall at or after CR_SERVO_EDGE_FROM (host-testable). */
uint16_t servo_rise_cycle(uint32_t cycles);

#endif
