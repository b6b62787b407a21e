/* Hobby servos for the flipper and two-gripper rigs (docs/protocol.md 7).
 *
 * Each configured servo gets a pulse every 20 ms frame, one servo after
 * another in its own 4 ms slot, so only one pulse is ever in flight.
 *
 * The edges come from Timer2's compare interrupt, with its TOP fixed at
 * 250 counts (125 us at 0.5 us a count) so that the timer is never
 * reconfigured: a pulse is placed by moving the counter (TCNT2) relative to
 * where it stands, which does not depend on how late an interrupt ran. The
 * rise is placed so that both edges fall in the part of the steppers' 40 us
 * tick after the tick interrupt has finished and before the next one: idle,
 * an edge never waits behind the steppers' work. The tick interrupt only
 * starts a pulse; it never waits.
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
/* The part of a tick where an edge is placed: [EDGE_FROM, EDGE_TO) cycles.
 * Before EDGE_FROM the idle tick interrupt runs; from about 595 on, an edge
 * waited for the next tick's interrupt in simavr (a 1,500 us pulse, whose
 * fall landed at 620, ran 12 to 15 us long; measured 2026-11-27 with falls
 * at 572..636: fine up to 588, late from 604). Every width fits: both edges
 * in one window (a remainder up to TO - FROM) or the fall at EDGE_FROM of a
 * later tick (the rest), as long as the window is at least half a tick. */
#define CR_SERVO_EDGE_FROM 260
#define CR_SERVO_EDGE_TO 590
/* The shortest first stretch after the rise, in counts; a shorter one starts
 * with half a period. Each move of the counter is relative, so an interrupt
 * may run late by up to the stretch ahead of it before the counter would
 * wrap past its match and the pulse gain a whole period (125 us): half a
 * period lets every edge interrupt be up to 62 us late (the tick interrupt
 * takes up to about 36 us with a step in it). */
#define CR_SERVO_MARGIN (CR_SERVO_PERIOD / 2)

void servo_init(void);
uint8_t servo_configure(uint8_t servo, uint16_t min_us, uint16_t max_us); /* 0: bad limits */
uint8_t servo_configured(uint8_t servo);
uint8_t servo_allows(uint8_t servo, uint16_t pulse_us);
void servo_set(uint8_t servo, uint16_t pulse_us); /* from the tick interrupt (a queued SERVO) */
void servo_tick(void);                            /* tick interrupt, first thing */
void servo_timer_isr(void);                       /* Timer2's compare interrupt */

#endif
