/* A fake of hal.h for host unit tests: virtual time, recorded pin writes,
 * byte queues in place of the UART. Time advances only with ticks, so a test
 * sees exactly the 25 kHz schedule the timer interrupt would produce. */
#include "fake_hal.h"

#include "../cuberobot/hal.h"

FakeHal fake;

void FakeHal::reset() {
  *this = FakeHal();
}

void hal_init(void) { fake.drivers = 0; fake.inits++; }
uint32_t hal_millis(void) { return (uint32_t)(fake.ticks * 40 / 1000); }
void hal_wdt_kick(void) { fake.wdt_kicks++; }
uint8_t hal_reset_cause(void) { return fake.reset_cause; }
uint16_t hal_boot_id(void) { return ++fake.boot_counter; }

void hal_steps_low(void) {
  for (int m = 0; m < 6; m++) fake.step_level[m] = 0;
}

void hal_steps_high(uint8_t mask) {
  for (int m = 0; m < 6; m++) {
    if (!(mask & (1 << m))) continue;
    if (fake.step_level[m]) fake.double_pulse++;
    fake.step_level[m] = 1;
    if (fake.drivers) {
      fake.steps[m][fake.dir[m] ? 0 : 1]++;
      fake.position[m] += fake.dir[m] ? 1 : -1;
    } else {
      fake.ignored++;
    }
    fake.step_ticks[m].push_back(fake.ticks);
  }
}

void hal_set_dir(uint8_t motor, uint8_t positive) {
  if (fake.step_level[motor]) fake.dir_during_pulse++;
  fake.dir[motor] = positive ? 1 : 0;
}

/* The servo timer is not modelled on the host (the pulses are measured on
 * the real binary in simavr): it records its calls only. */
void hal_servo_pin(uint8_t servo, uint8_t high) { fake.servo_edges.push_back({fake.ticks, servo * 2 + (high ? 1 : 0)}); }
uint16_t hal_tick_cycle(void) { return 40; }
void hal_servo_timer_start(uint8_t delay) { fake.servo_armed = delay; }
void hal_servo_timer_shift(uint8_t) {}
void hal_servo_timer_stop(void) { fake.servo_armed = -1; }

void hal_drivers(uint8_t enabled) {
  if (fake.drivers != enabled) fake.enable_log.push_back({fake.ticks, enabled});
  fake.drivers = enabled;
}
uint8_t hal_drivers_enabled(void) { return fake.drivers; }
uint8_t hal_button_down(void) { return fake.button; }
uint8_t hal_estop_input(void) { return fake.estop_input; }
void hal_led(uint8_t on) { fake.led = on; }

int16_t hal_rx_read(void) {
  if (fake.rx.empty()) return -1;
  uint8_t b = fake.rx.front();
  fake.rx.pop_front();
  return b;
}

uint8_t hal_rx_take_overflow(void) {
  uint8_t o = fake.rx_overflow;
  fake.rx_overflow = 0;
  return o;
}

void hal_tx_write(const uint8_t *data, uint8_t n) {
  for (uint8_t i = 0; i < n; i++) fake.tx.push_back(data[i]);
}

uint8_t hal_irq_save(void) { return 0; }
void hal_irq_restore(uint8_t) {}
