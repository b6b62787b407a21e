/* The hardware boundary of the firmware.
 *
 * Everything above this interface (framing, motion, protocol) is plain C++
 * that also compiles with the host's g++: firmware/test_host provides a fake
 * implementation with virtual time and recorded pin writes, hal_avr.cpp the
 * real one on the AVR's registers.
 */
#ifndef CUBEROBOT_HAL_H
#define CUBEROBOT_HAL_H

#include <stdint.h>

void hal_init(void);            /* pins, UART, tick timer; drivers disabled */
uint32_t hal_millis(void);
void hal_wdt_kick(void);
uint8_t hal_reset_cause(void);  /* EV_BOOT argument: 0 unknown, 1..4 */
uint16_t hal_boot_id(void);     /* changes at every boot */

/* Called from the tick interrupt only. */
void hal_steps_low(void);
void hal_steps_high(uint8_t motor_mask);  /* bit i: motor i */
void hal_set_dir(uint8_t motor, uint8_t positive);

/* Servo outputs (servo.h): servo i drives the DIR pin of motor i + 1, which
 * a flipper or two-gripper rig does not use as a DIR pin. The servo timer's
 * compare interrupt calls servo_timer_isr(): first `delay` counts after
 * hal_servo_timer_start, then every CR_SERVO_PERIOD counts; a shift moves
 * the counter on by `k` counts from where it stands (the next match comes
 * k counts sooner). */
void hal_servo_pin(uint8_t servo, uint8_t high);
uint16_t hal_tick_cycle(void); /* CPU cycles since the current tick began */
void hal_servo_timer_start(uint8_t delay);
void hal_servo_timer_shift(uint8_t k);
void hal_servo_timer_stop(void);

void hal_drivers(uint8_t enabled);
uint8_t hal_drivers_enabled(void);
uint8_t hal_button_down(void);
uint8_t hal_estop_input(void);  /* 1 while the e-stop input is open/active */
void hal_led(uint8_t on);

/* Serial: the receive interrupt hands every byte to app_rx_isr(); bytes it
 * does not consume land in the receive ring read here. */
int16_t hal_rx_read(void);      /* -1 when empty */
uint8_t hal_rx_take_overflow(void);
void hal_tx_write(const uint8_t *data, uint8_t n);  /* blocks while full */

/* Interrupt masking around state shared with the interrupts. */
uint8_t hal_irq_save(void);
void hal_irq_restore(uint8_t state);

#endif
