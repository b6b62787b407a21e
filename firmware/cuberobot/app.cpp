#include "app.h"

#include "constants.h"
#include "framing.h"
#include "hal.h"
#include "motion.h"
#include "servo.h"
#include "pins.h"

#define DEBOUNCE_MS 20
#define RX_BYTES_PER_LOOP 64

static FrameDecoder dec;
static volatile uint8_t estop_latched;
static volatile uint8_t estop_event; /* cause waiting to be reported, 0 none */
/* An e-stop found moves queued or running: one may have stopped part-way.
 * Kept through CLEAR_ESTOP and new sessions (only a boot or the next
 * accepted MOVE clears it), so that clearing the latch cannot hide that a
 * turn was cut short (docs/protocol.md 3.2). */
static volatile uint8_t cut;
static volatile uint8_t rt_status_pending;
static uint8_t estop_run; /* RT_ESTOP bytes in a row; the receive interrupt's own */
static uint8_t session;
static uint8_t last_seq;
static uint8_t last_reply[CR_FRAME_MAX];
static uint8_t last_reply_len;
static uint8_t event_seq;
static uint8_t rx_errors;
static uint16_t boot_id;
static uint16_t idle_ms;
static uint32_t idle_since;
static uint8_t button_raw, button_held;
static uint32_t button_changed_at;

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | ((uint16_t)p[1] << 8)); }
static uint32_t rd32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint8_t wr16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  return 2;
}
static uint8_t wr32(uint8_t *p, uint32_t v) {
  wr16(p, (uint16_t)v);
  wr16(p + 2, (uint16_t)(v >> 16));
  return 4;
}

static void send(const uint8_t *content, uint8_t n) {
  uint8_t out[2 * (CR_FRAME_MAX + 1)];
  uint8_t m = frame_encode(content, n, out);
  hal_tx_write(out, m);
}

static uint8_t next_event_seq(void) {
  event_seq = (uint8_t)(event_seq == 255 ? 1 : event_seq + 1);
  return event_seq;
}

static void send_event(uint8_t event, uint8_t arg) {
  uint8_t c[4] = {REP_EVENT, next_event_seq(), event, arg};
  send(c, 4);
}

static void bump_rx_errors(void) {
  if (rx_errors < 255) rx_errors++;
}

/* Emergency stop: from the receive or tick interrupt, or with interrupts
 * masked. Steps stop at once; the drivers go off; the latch holds. */
static void estop_now(uint8_t cause) {
  if (motion_queue_len()) cut = 1;
  motion_stop();
  hal_drivers(0);
  if (!estop_latched) {
    estop_latched = 1;
    estop_event = cause;
  }
}

/* A run of RT_ESTOP_RUN RT_ESTOP bytes stops; any other byte ends the run.
 * An RT_ESTOP never reaches the frame decoder, so a lone one (noise) costs at
 * most the frame it lands in (its CRC fails). */
uint8_t app_rx_isr(uint8_t byte) {
  if (byte == RT_ESTOP) {
    if (estop_run < RT_ESTOP_RUN) estop_run++;
    if (estop_run == RT_ESTOP_RUN) estop_now(ESTOP_BY_BYTE);
    return 1;
  }
  estop_run = 0;
  if (byte == RT_STATUS) {
    rt_status_pending = 1;
    return 1;
  }
  return 0;
}

void app_tick_isr(void) {
  if (hal_estop_input() && !estop_latched) estop_now(ESTOP_BY_INPUT);
}

static uint8_t status_payload(uint8_t *p) {
  uint8_t flags = 0;
  if (session) flags |= FLAG_SESSION;
  if (estop_latched) flags |= FLAG_ESTOP;
  if (motion_queue_len()) flags |= FLAG_MOVING;
  if (hal_drivers_enabled()) flags |= FLAG_ENABLED;
  if (button_held) flags |= FLAG_BUTTON;
  if (motion_all_configured()) flags |= FLAG_CONFIGURED;
  if (cut) flags |= FLAG_CUT;
  uint8_t n = 0;
  n += wr16(p + n, boot_id);
  p[n++] = flags;
  n += wr16(p + n, motion_last_done_id());
  n += wr16(p + n, motion_active_id());
  p[n++] = motion_queue_len();
  n += wr32(p + n, hal_millis());
  p[n++] = rx_errors;
  return n; /* 13 */
}

static uint8_t reply_err(uint8_t *r, uint8_t code, uint8_t detail) {
  r[0] = REP_ERR;
  r[2] = code;
  r[3] = detail;
  return 4;
}

static uint8_t reply_ack(uint8_t *r) {
  r[0] = REP_ACK;
  r[2] = motion_queue_free();
  return 3;
}

static uint8_t valid_steps(int16_t s) { return s != 0 && s >= -CR_MAX_STEPS && s <= CR_MAX_STEPS; }

/* A motor whose DIR pin carries a servo's pulses cannot step. */
static uint8_t pin_is_servo(uint8_t motor) { return motor >= 1 && servo_configured((uint8_t)(motor - 1)); }

/* Queues a move, or refuses it while the e-stop is latched or the queue is
 * full. Masked so that an e-stop byte cannot slip between the check and the
 * push and leave a move queued behind the latch. */
static uint8_t queue_move(const MoveCmd &m, uint8_t *r, uint8_t steppers) {
  uint8_t s = hal_irq_save();
  uint8_t n;
  if (estop_latched) {
    n = reply_err(r, ERR_ESTOP, 0);
  } else if (!motion_queue_free()) {
    n = reply_err(r, ERR_QUEUE_FULL, 0);
  } else {
    if (steppers) hal_drivers(1);
    cut = 0;
    motion_push(m);
    n = reply_ack(r);
  }
  hal_irq_restore(s);
  return n;
}

static uint8_t do_move(const uint8_t *p, uint8_t *r) {
  MoveCmd m;
  m.id = rd16(p);
  m.motor_a = p[2];
  m.steps_a = (int16_t)rd16(p + 3);
  m.motor_b = p[5];
  m.steps_b = (int16_t)rd16(p + 6);
  m.overlap = rd16(p + 8);
  if (m.motor_a >= CR_MOTORS || !valid_steps(m.steps_a)) return reply_err(r, ERR_BAD_ARG, 0);
  if (m.motor_b != CR_NO_MOTOR) {
    if (m.motor_b >= CR_MOTORS || m.motor_b == m.motor_a || !valid_steps(m.steps_b))
      return reply_err(r, ERR_BAD_ARG, 1);
    if (!motion_configured(m.motor_b)) return reply_err(r, ERR_NOT_CONFIGURED, m.motor_b);
  }
  if (!motion_configured(m.motor_a)) return reply_err(r, ERR_NOT_CONFIGURED, m.motor_a);
  if (pin_is_servo(m.motor_a)) return reply_err(r, ERR_BAD_ARG, 0);
  if (m.motor_b != CR_NO_MOTOR && pin_is_servo(m.motor_b)) return reply_err(r, ERR_BAD_ARG, 1);
  return queue_move(m, r, 1);
}

static uint8_t do_config_servo(const uint8_t *p, uint8_t *r) {
  if (motion_queue_len()) return reply_err(r, ERR_BUSY, 0);
  if (p[0] >= CR_SERVOS) return reply_err(r, ERR_BAD_ARG, 0);
  if (!servo_configure(p[0], rd16(p + 1), rd16(p + 3))) return reply_err(r, ERR_BAD_ARG, 1);
  return reply_ack(r);
}

#define CR_MAX_TRAVEL_MS 10000

static uint8_t do_servo(const uint8_t *p, uint8_t *r) {
  MoveCmd m;
  m.id = rd16(p);
  uint8_t servo = p[2];
  uint16_t us = rd16(p + 3);
  uint16_t travel = rd16(p + 5);
  if (servo >= CR_SERVOS) return reply_err(r, ERR_BAD_ARG, 0);
  if (!servo_configured(servo)) return reply_err(r, ERR_NOT_CONFIGURED, servo);
  if (!servo_allows(servo, us)) return reply_err(r, ERR_BAD_ARG, 1);
  if (travel > CR_MAX_TRAVEL_MS) return reply_err(r, ERR_BAD_ARG, 2);
  m.motor_a = (uint8_t)(CR_SERVO_MOVE + servo);
  m.steps_a = (int16_t)us;
  m.motor_b = CR_NO_MOTOR;
  m.steps_b = (int16_t)travel;
  m.overlap = 0;
  return queue_move(m, r, 0);
}

static uint8_t do_config_motor(const uint8_t *p, uint8_t *r) {
  if (motion_queue_len()) return reply_err(r, ERR_BUSY, 0);
  uint8_t motor = p[0];
  MotorConfig c;
  c.vmax = rd32(p + 1);
  c.accel = rd32(p + 5);
  c.vmin = rd32(p + 9);
  c.settle_ms = rd16(p + 13);
  if (motor >= CR_MOTORS) return reply_err(r, ERR_BAD_ARG, 0);
  if (c.vmax == 0 || c.vmax >= CR_Q) return reply_err(r, ERR_BAD_ARG, 1);
  if (c.accel == 0 || c.accel >= CR_Q) return reply_err(r, ERR_BAD_ARG, 2);
  if (c.vmin == 0 || c.vmin > c.vmax) return reply_err(r, ERR_BAD_ARG, 3);
  motion_configure(motor, c);
  return reply_ack(r);
}

static uint8_t expected_length(uint8_t type) {
  switch (type) {
    case CMD_HELLO: return 1;
    case CMD_CONFIG_MOTOR: return 15;
    case CMD_CONFIG_GLOBAL: return 2;
    case CMD_MOVE: return 10;
    case CMD_CONFIG_SERVO: return 5;
    case CMD_SERVO: return 7;
    default: return 0;
  }
}

/* Runs one command; returns the reply length (reply content in r). */
static uint8_t execute(uint8_t type, const uint8_t *p, uint8_t *r) {
  switch (type) {
    case CMD_CONFIG_MOTOR:
      return do_config_motor(p, r);
    case CMD_CONFIG_GLOBAL:
      idle_ms = rd16(p);
      return reply_ack(r);
    case CMD_MOVE:
      return do_move(p, r);
    case CMD_CONFIG_SERVO:
      return do_config_servo(p, r);
    case CMD_SERVO:
      return do_servo(p, r);
    case CMD_CLEAR_ESTOP:
      if (hal_estop_input()) return reply_err(r, ERR_ESTOP, ESTOP_BY_INPUT);
      if (estop_latched) {
        uint8_t s = hal_irq_save();
        estop_latched = 0;
        estop_event = 0;
        hal_irq_restore(s);
        send_event(EV_ESTOP_CLEARED, 0);
      }
      return reply_ack(r);
    case CMD_RELEASE:
      if (motion_queue_len()) return reply_err(r, ERR_BUSY, 0);
      hal_drivers(0);
      return reply_ack(r);
  }
  return reply_err(r, ERR_UNKNOWN_TYPE, type);
}

static void handle_frame(const uint8_t *f, uint8_t len) {
  uint8_t type = f[0];
  uint8_t seq = f[1];
  const uint8_t *p = f + 2;
  uint8_t plen = (uint8_t)(len - 2);
  uint8_t r[CR_FRAME_MAX];
  uint8_t n;
  r[1] = seq;
#ifdef CR_TEST_HOOKS
  /* Test builds only (make EXTRA=-DCR_TEST_HOOKS): a main loop that hangs,
   * for the watchdog test. */
  if (type == 0x7F) {
    for (;;) {
    }
  }
#endif
  if (type < CMD_HELLO || type > CMD_SERVO) {
    n = reply_err(r, ERR_UNKNOWN_TYPE, type);
    send(r, n);
    return;
  }
  if (type == CMD_STATUS) {
    if (plen != 0) {
      n = reply_err(r, ERR_BAD_LENGTH, type);
    } else {
      r[0] = REP_STATUS;
      n = (uint8_t)(2 + status_payload(r + 2));
    }
    send(r, n);
    return;
  }
  if (type == CMD_HELLO) {
    if (plen != 1) {
      n = reply_err(r, ERR_BAD_LENGTH, type);
    } else if (p[0] != CR_PROTOCOL_VERSION) {
      n = reply_err(r, ERR_VERSION, CR_PROTOCOL_VERSION);
    } else {
      session = 1;
      r[0] = REP_HELLO_OK;
      r[2] = CR_PROTOCOL_VERSION;
      r[3] = CR_FW_MAJOR;
      r[4] = CR_FW_MINOR;
      r[5] = CR_FW_PATCH;
      r[6] = CR_BOARD_ID;
      r[7] = CR_QUEUE_CAPACITY;
      wr16(r + 8, boot_id);
      wr16(r + 10, (uint16_t)CR_TICK_HZ);
      n = 12;
    }
    last_seq = seq;
    for (uint8_t i = 0; i < n; i++) last_reply[i] = r[i];
    last_reply_len = n;
    send(r, n);
    return;
  }
  if (!session) {
    n = reply_err(r, ERR_NO_SESSION, 0);
    send(r, n);
    return;
  }
  if (seq != 0 && seq == last_seq && last_reply_len) {
    send(last_reply, last_reply_len);
    return;
  }
  if (plen != expected_length(type)) {
    n = reply_err(r, ERR_BAD_LENGTH, type);
  } else {
    n = execute(type, p, r);
  }
  last_seq = seq;
  for (uint8_t i = 0; i < n; i++) last_reply[i] = r[i];
  last_reply_len = n;
  send(r, n);
}

static void poll_serial(void) {
  if (hal_rx_take_overflow()) bump_rx_errors();
  for (uint8_t i = 0; i < RX_BYTES_PER_LOOP; i++) {
    int16_t b = hal_rx_read();
    if (b < 0) break;
    uint8_t res = dec.feed((uint8_t)b);
    if (res == FRAME_OK) {
      handle_frame(dec.buf, dec.len);
    } else if (res == FRAME_BAD) {
      bump_rx_errors();
    }
  }
}

static void poll_button(uint32_t now) {
  uint8_t raw = hal_button_down();
  if (raw != button_raw) {
    button_raw = raw;
    button_changed_at = now;
  } else if (raw != button_held && (uint32_t)(now - button_changed_at) >= DEBOUNCE_MS) {
    button_held = raw;
    if (raw) send_event(EV_BUTTON, 0);
  }
}

static void update_led(uint32_t now) {
  uint8_t on;
  if (estop_latched) {
    on = (now / 100) & 1;
  } else if (!session) {
    on = (now / 500) & 1;
  } else {
    on = 1;
  }
  hal_led(on);
}

void app_setup(void) {
  hal_init();
  dec.reset();
  motion_init();
  servo_init();
  estop_latched = 0;
  estop_event = 0;
  cut = 0;
  rt_status_pending = 0;
  estop_run = 0;
  session = 0;
  last_seq = 0;
  last_reply_len = 0;
  event_seq = 0;
  rx_errors = 0;
  idle_ms = 0;
  button_raw = button_held = 0;
  boot_id = hal_boot_id();
  idle_since = hal_millis();
  send_event(EV_BOOT, hal_reset_cause());
}

void app_loop(void) {
  hal_wdt_kick();
  uint32_t now = hal_millis();
  poll_serial();
  if (rt_status_pending) {
    rt_status_pending = 0;
    uint8_t c[2 + 13];
    c[0] = REP_STATUS_RT;
    c[1] = next_event_seq(); /* unsolicited: the event counter (1.3) */
    status_payload(c + 2);
    send(c, sizeof c);
  }
  uint8_t cause = estop_event;
  if (cause) {
    estop_event = 0;
    send_event(EV_ESTOP_LATCHED, cause);
  }
  DoneRecord d;
  while (motion_pop_done(&d)) {
    uint8_t c[9];
    c[0] = REP_DONE;
    c[1] = next_event_seq();
    wr16(c + 2, d.id);
    wr32(c + 4, d.ticks);
    c[8] = motion_queue_free();
    send(c, sizeof c);
  }
  poll_button(now);
  if (motion_queue_len()) {
    idle_since = now;
  } else if (idle_ms && hal_drivers_enabled() && (uint32_t)(now - idle_since) >= idle_ms) {
    hal_drivers(0);
  }
  update_led(now);
}
