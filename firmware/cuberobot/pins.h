/* Pin maps per board, as AVR port letter + bit.
 *
 * Kept in plain C macros so that the simavr harness (firmware/sim) reads the
 * very same map as the firmware: the emulated rig watches exactly the pins the
 * firmware drives. The Arduino pin numbers are in the comments and in
 * docs/hardware.md.
 *
 * All six STEP pins share one port so that the timer interrupt raises the
 * step pulses of every motor of a move with a single write.
 */
#ifndef CUBEROBOT_PINS_H
#define CUBEROBOT_PINS_H

#if defined(__AVR_ATmega2560__) || defined(CR_PINS_MEGA)

#define CR_BOARD_ID 2
#define CR_QUEUE_CAPACITY 8
/* STEP U R F D L B = D22..D27 (PA0..PA5) */
#define CR_STEP_PORT A
#define CR_STEP0_BIT 0
#define CR_STEP1_BIT 1
#define CR_STEP2_BIT 2
#define CR_STEP3_BIT 3
#define CR_STEP4_BIT 4
#define CR_STEP5_BIT 5
/* DIR U R F D L B = D37 D36 D35 D34 D33 D32 (PC0..PC5) */
#define CR_DIR0_PORT C
#define CR_DIR0_BIT 0
#define CR_DIR1_PORT C
#define CR_DIR1_BIT 1
#define CR_DIR2_PORT C
#define CR_DIR2_BIT 2
#define CR_DIR3_PORT C
#define CR_DIR3_BIT 3
#define CR_DIR4_PORT C
#define CR_DIR4_BIT 4
#define CR_DIR5_PORT C
#define CR_DIR5_BIT 5
/* shared ENABLE (active low) = D38 (PD7) */
#define CR_EN_PORT D
#define CR_EN_BIT 7
/* start button to GND = D40 (PG1) */
#define CR_BUTTON_PORT G
#define CR_BUTTON_BIT 1
/* emergency-stop input: a normally-open switch to GND, stops when closed = D41 (PG0) */
#define CR_ESTOP_PORT G
#define CR_ESTOP_BIT 0
/* status LED = D13 (PB7, the on-board LED) */
#define CR_LED_PORT B
#define CR_LED_BIT 7

#else /* Arduino Uno (ATmega328P) */

#define CR_BOARD_ID 1
#define CR_QUEUE_CAPACITY 4
/* STEP U R F D L B = D2..D7 (PD2..PD7) */
#define CR_STEP_PORT D
#define CR_STEP0_BIT 2
#define CR_STEP1_BIT 3
#define CR_STEP2_BIT 4
#define CR_STEP3_BIT 5
#define CR_STEP4_BIT 6
#define CR_STEP5_BIT 7
/* DIR U R F D L B = D8 D9 D10 D11 D12 A0 (PB0..PB4, PC0) */
#define CR_DIR0_PORT B
#define CR_DIR0_BIT 0
#define CR_DIR1_PORT B
#define CR_DIR1_BIT 1
#define CR_DIR2_PORT B
#define CR_DIR2_BIT 2
#define CR_DIR3_PORT B
#define CR_DIR3_BIT 3
#define CR_DIR4_PORT B
#define CR_DIR4_BIT 4
#define CR_DIR5_PORT C
#define CR_DIR5_BIT 0
/* shared ENABLE (active low) = A1 (PC1) */
#define CR_EN_PORT C
#define CR_EN_BIT 1
/* start button to GND = A2 (PC2) */
#define CR_BUTTON_PORT C
#define CR_BUTTON_BIT 2
/* emergency-stop input: a normally-open switch to GND, stops when closed = A3 (PC3) */
#define CR_ESTOP_PORT C
#define CR_ESTOP_BIT 3
/* status LED = D13 (PB5, the on-board LED) */
#define CR_LED_PORT B
#define CR_LED_BIT 5

#endif

/* STEP bits are consecutive: motor i's is bit CR_STEP_SHIFT + i, so the
 * tick interrupt turns a motor mask into port bits with one shift. */
#define CR_STEP_SHIFT CR_STEP0_BIT
#if CR_STEP1_BIT != CR_STEP_SHIFT + 1 || CR_STEP2_BIT != CR_STEP_SHIFT + 2 || \
    CR_STEP3_BIT != CR_STEP_SHIFT + 3 || CR_STEP4_BIT != CR_STEP_SHIFT + 4 || \
    CR_STEP5_BIT != CR_STEP_SHIFT + 5
#error "the six STEP pins must be consecutive bits of one port"
#endif

#define CR_STEP_MASK ((1 << CR_STEP0_BIT) | (1 << CR_STEP1_BIT) | (1 << CR_STEP2_BIT) | \
                      (1 << CR_STEP3_BIT) | (1 << CR_STEP4_BIT) | (1 << CR_STEP5_BIT))

#endif
