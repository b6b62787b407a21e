/* The AVR side of hal.h: registers, Timer1 tick, own UART driver, EEPROM,
 * watchdog. Compiled only for the AVR (the host tests bring their own). */
#ifdef __AVR__

#include <Arduino.h>
#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/wdt.h>

#include "app.h"
#include "constants.h"
#include "hal.h"
#include "motion.h"
#include "servo.h"
#include "pins.h"

#define CR_CAT_(a, b) a##b
#define CR_CAT(a, b) CR_CAT_(a, b)
#define PORT_OF(x) CR_CAT(PORT, x)
#define DDR_OF(x) CR_CAT(DDR, x)
#define PIN_OF(x) CR_CAT(PIN, x)

#if defined(USART0_RX_vect)
#define CR_RX_vect USART0_RX_vect
#define CR_UDRE_vect USART0_UDRE_vect
#else
#define CR_RX_vect USART_RX_vect
#define CR_UDRE_vect USART_UDRE_vect
#endif

#define RX_SIZE 64 /* a power of two */
#define TX_SIZE 128

/* The reset flags, saved before anything (the watchdog stays armed after a
 * watchdog reset and must be stopped at once). */
uint8_t cr_mcusr __attribute__((section(".noinit")));
extern "C" void cr_save_mcusr(void) __attribute__((naked, used, section(".init3")));
extern "C" void cr_save_mcusr(void) {
  cr_mcusr = MCUSR;
  MCUSR = 0;
  wdt_disable();
}

static volatile uint8_t rx_buf[RX_SIZE];
static volatile uint8_t rx_head, rx_tail, rx_overflow;
static volatile uint8_t tx_buf[TX_SIZE];
static volatile uint8_t tx_head, tx_tail;
static volatile uint8_t drivers_on;

static volatile uint8_t *const dir_port[CR_MOTORS] = {
    &PORT_OF(CR_DIR0_PORT), &PORT_OF(CR_DIR1_PORT), &PORT_OF(CR_DIR2_PORT),
    &PORT_OF(CR_DIR3_PORT), &PORT_OF(CR_DIR4_PORT), &PORT_OF(CR_DIR5_PORT)};
static const uint8_t dir_mask[CR_MOTORS] = {
    1 << CR_DIR0_BIT, 1 << CR_DIR1_BIT, 1 << CR_DIR2_BIT,
    1 << CR_DIR3_BIT, 1 << CR_DIR4_BIT, 1 << CR_DIR5_BIT};

void hal_init(void) {
  /* Drivers off before the outputs are enabled (EN is active low). */
  PORT_OF(CR_EN_PORT) |= (1 << CR_EN_BIT);
  DDR_OF(CR_EN_PORT) |= (1 << CR_EN_BIT);
  drivers_on = 0;
  PORT_OF(CR_STEP_PORT) &= (uint8_t)~CR_STEP_MASK;
  DDR_OF(CR_STEP_PORT) |= CR_STEP_MASK;
  for (uint8_t i = 0; i < CR_MOTORS; i++) {
    *dir_port[i] &= (uint8_t)~dir_mask[i];
    *(dir_port[i] - 1) |= dir_mask[i]; /* DDRx sits just below PORTx */
  }
  DDR_OF(CR_BUTTON_PORT) &= (uint8_t) ~(1 << CR_BUTTON_BIT);
  PORT_OF(CR_BUTTON_PORT) |= (1 << CR_BUTTON_BIT); /* pull-up */
  DDR_OF(CR_ESTOP_PORT) &= (uint8_t) ~(1 << CR_ESTOP_BIT);
  PORT_OF(CR_ESTOP_PORT) |= (1 << CR_ESTOP_BIT);
  DDR_OF(CR_LED_PORT) |= (1 << CR_LED_BIT);

  /* UART0, 8N1, double speed as the Arduino core does it. */
  rx_head = rx_tail = rx_overflow = 0;
  tx_head = tx_tail = 0;
  UCSR0A = (1 << U2X0);
  uint16_t ubrr = (uint16_t)((F_CPU / 8 / CR_BAUD) - 1);
  if (CR_BAUD == 115200UL && F_CPU == 16000000UL) ubrr = 16;
  UBRR0H = (uint8_t)(ubrr >> 8);
  UBRR0L = (uint8_t)ubrr;
  UCSR0C = (1 << UCSZ01) | (1 << UCSZ00);
  UCSR0B = (1 << RXEN0) | (1 << TXEN0) | (1 << RXCIE0);

  /* Timer1, CTC on OCR1A, no prescaler: 16 MHz / 640 = 25 kHz. */
  TCCR1A = 0;
  TCCR1B = 0;
  TCNT1 = 0;
  OCR1A = (uint16_t)(F_CPU / CR_TICK_HZ - 1);
  TCCR1B = (1 << WGM12) | (1 << CS10);
  TIMSK1 = (1 << OCIE1A);

  /* Timer2 for the servos' edges: CTC at a TOP never changed afterwards,
   * 16 MHz / 8 = 0.5 us a count; its interrupt runs only while a pulse does. */
  TCCR2A = (1 << WGM21);
  TCCR2B = (1 << CS21);
  OCR2A = CR_SERVO_PERIOD - 1;
  TIMSK2 = 0;

  wdt_enable(WDTO_250MS);
}

uint32_t hal_millis(void) { return millis(); }
void hal_wdt_kick(void) { wdt_reset(); }

uint8_t hal_reset_cause(void) {
  uint8_t f = cr_mcusr;
  if (f & (1 << WDRF)) return 4;
  if (f & (1 << BORF)) return 3;
  if (f & (1 << EXTRF)) return 2;
  if (f & (1 << PORF)) return 1;
  return 0;
}

uint16_t hal_boot_id(void) {
  uint16_t *addr = (uint16_t *)0;
  uint16_t id = (uint16_t)(eeprom_read_word(addr) + 1);
  eeprom_update_word(addr, id);
  return id;
}

void hal_steps_low(void) { PORT_OF(CR_STEP_PORT) &= (uint8_t)~CR_STEP_MASK; }

void hal_steps_high(uint8_t motor_mask) {
  if (motor_mask) PORT_OF(CR_STEP_PORT) |= (uint8_t)(motor_mask << CR_STEP_SHIFT);
}

void hal_set_dir(uint8_t motor, uint8_t positive) {
  /* Masked wherever it is called from: servo edges (hal_servo_pin) write
   * the same ports, and a read-modify-write cut in two would undo one. */
  uint8_t s = SREG;
  cli();
  if (positive) {
    *dir_port[motor] |= dir_mask[motor];
  } else {
    *dir_port[motor] &= (uint8_t)~dir_mask[motor];
  }
  SREG = s;
}

void hal_servo_pin(uint8_t servo, uint8_t high) { hal_set_dir((uint8_t)(servo + 1), high); }

uint16_t hal_tick_cycle(void) { return TCNT1; }

void hal_servo_timer_start(uint8_t delay) {
  TCNT2 = (uint8_t)(CR_SERVO_PERIOD - delay);
  TIFR2 = (1 << OCF2A); /* a match from before is not this one */
  TIMSK2 |= (1 << OCIE2A);
}

void hal_servo_timer_shift(uint8_t k) { TCNT2 = (uint8_t)(TCNT2 + k); }
void hal_servo_timer_stop(void) { TIMSK2 &= (uint8_t) ~(1 << OCIE2A); }

void hal_drivers(uint8_t enabled) {
  uint8_t s = SREG;
  cli();
  if (enabled) {
    PORT_OF(CR_EN_PORT) &= (uint8_t) ~(1 << CR_EN_BIT);
  } else {
    PORT_OF(CR_EN_PORT) |= (1 << CR_EN_BIT);
  }
  drivers_on = enabled;
  SREG = s;
}

uint8_t hal_drivers_enabled(void) { return drivers_on; }
uint8_t hal_button_down(void) { return !(PIN_OF(CR_BUTTON_PORT) & (1 << CR_BUTTON_BIT)); }
uint8_t hal_estop_input(void) { return !(PIN_OF(CR_ESTOP_PORT) & (1 << CR_ESTOP_BIT)); }

void hal_led(uint8_t on) {
#ifdef CR_PROFILE_ISR
  return;
#endif
  if (on) {
    PORT_OF(CR_LED_PORT) |= (1 << CR_LED_BIT);
  } else {
    PORT_OF(CR_LED_PORT) &= (uint8_t) ~(1 << CR_LED_BIT);
  }
}

int16_t hal_rx_read(void) {
  if (rx_head == rx_tail) return -1;
  uint8_t b = rx_buf[rx_tail];
  rx_tail = (uint8_t)((rx_tail + 1) & (RX_SIZE - 1));
  return b;
}

uint8_t hal_rx_take_overflow(void) {
  uint8_t s = SREG;
  cli();
  uint8_t o = rx_overflow;
  rx_overflow = 0;
  SREG = s;
  return o;
}

void hal_tx_write(const uint8_t *data, uint8_t n) {
  for (uint8_t i = 0; i < n; i++) {
    uint8_t next = (uint8_t)((tx_head + 1) % TX_SIZE);
    while (next == tx_tail) {
      /* Full: the data-register-empty interrupt drains it. */
    }
    tx_buf[tx_head] = data[i];
    tx_head = next;
    UCSR0B |= (1 << UDRIE0);
  }
}

uint8_t hal_irq_save(void) {
  uint8_t s = SREG;
  cli();
  return s;
}

void hal_irq_restore(uint8_t state) { SREG = state; }

ISR(CR_RX_vect) {
  uint8_t status = UCSR0A;
  uint8_t b = UDR0;
  if (status & ((1 << FE0) | (1 << DOR0))) rx_overflow = 1;
  if (app_rx_isr(b)) return;
  uint8_t next = (uint8_t)((rx_head + 1) & (RX_SIZE - 1));
  if (next == rx_tail) {
    rx_overflow = 1;
  } else {
    rx_buf[rx_head] = b;
    rx_head = next;
  }
}

ISR(CR_UDRE_vect) {
  if (tx_head == tx_tail) {
    UCSR0B &= (uint8_t) ~(1 << UDRIE0);
  } else {
    UDR0 = tx_buf[tx_tail];
    tx_tail = (uint8_t)((tx_tail + 1) % TX_SIZE);
  }
}

ISR(TIMER1_COMPA_vect) {
#ifdef CR_PROFILE_ISR /* the LED shows the tick interrupt's length (make EXTRA=-DCR_PROFILE_ISR) */
  PORT_OF(CR_LED_PORT) |= (1 << CR_LED_BIT);
#endif
  servo_tick(); /* first, while the tick's count is still low (servo.h) */
  motion_tick();
  app_tick_isr();
#ifdef CR_PROFILE_ISR
  PORT_OF(CR_LED_PORT) &= (uint8_t) ~(1 << CR_LED_BIT);
#endif
}

/* Both edges of a servo pulse, and the stretches between (servo.h). */
ISR(TIMER2_COMPA_vect) { servo_timer_isr(); }

#endif
