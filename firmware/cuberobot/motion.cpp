/* The hot path (motion_tick, every 40 us) is built for speed: the whole
 * interrupt must stay well under the 640 cycles of a tick with two motors
 * stepping, whatever the Arduino IDE's -Os says. */
#pragma GCC optimize("O2")

#include "motion.h"
#include "hal.h"
#include "servo.h"

void Chan::start(uint16_t steps, const MotorConfig &cfg) {
  vmax = cfg.vmax;
  accel = cfg.accel;
  vmin = cfg.vmin;
  v = vmin;
  acc = 0;
  n = steps;
  done = 0;
  ramp = 0;
  phase = PH_ACCEL;
}

inline uint8_t Chan::tick() {
  uint8_t stepped = 0;
  uint32_t a = acc + v;
  if ((uint8_t)(a >> 24)) { /* a >= Q: a < 2Q always */
    a -= CR_Q;
    stepped = 1;
    done++;
  }
  acc = a;
  uint16_t remaining = (uint16_t)(n - done);
  if (phase == PH_ACCEL) {
    if (remaining <= done) {
      phase = PH_DECEL;
    } else {
      v += accel;
      if (v >= vmax) {
        v = vmax;
        ramp = done;
        phase = PH_CRUISE;
      }
    }
  } else if (phase == PH_CRUISE) {
    if (remaining <= ramp) phase = PH_DECEL;
  }
  if (phase == PH_DECEL) {
    v = (v >= vmin + accel) ? v - accel : vmin;
  }
  return stepped;
}

uint32_t profile_ticks(uint16_t n, const MotorConfig &cfg) {
  Chan c;
  c.start(n, cfg);
  uint32_t t = 0;
  while (!c.finished()) {
    c.tick();
    t++;
  }
  return t;
}

enum { S_QUEUED = 0, S_RUNNING = 1, S_SETTLING = 2, S_WAITING = 3 };

struct Slot {
  MoveCmd cmd;
  Chan ch[2];
  uint8_t nch;
  uint8_t state;
  uint32_t settle_left;
};

#define DONE_FIFO 8

static MotorConfig cfg[CR_MOTORS];
static uint8_t configured_mask;
static Slot ring[CR_QUEUE_CAPACITY];
static volatile uint8_t head, count, started;
static DoneRecord done_fifo[DONE_FIFO];
static volatile uint8_t done_head, done_count, done_lost;
static volatile uint16_t last_done_id;
/* Ticks the rig has been moving since the last DONE (or since it last sat
 * idle): a DONE reports them, so that with overlapping moves the DONEs of a
 * job still add up to the time the rig took (protocol section 3). */
static uint32_t busy;
/* Whether the head has stepped, or a successor been queued, since the
 * overlap check last ran: only then can its answer change. The check reads
 * two slots of the ring; run on every tick it made a stepping tick longer
 * than a tick (738 of 640 cycles, measured in simavr). */
static volatile uint8_t recheck;

void motion_init(void) {
  configured_mask = 0;
  head = count = started = 0;
  busy = 0;
  done_head = done_count = done_lost = 0;
  last_done_id = CR_NO_ID;
}

void motion_configure(uint8_t motor, const MotorConfig &c) {
  cfg[motor] = c;
  configured_mask |= (uint8_t)(1 << motor);
}

uint8_t motion_configured(uint8_t motor) { return (configured_mask >> motor) & 1; }
uint8_t motion_all_configured(void) { return configured_mask == (1 << CR_MOTORS) - 1; }
uint8_t motion_queue_len(void) { return count; }
uint8_t motion_queue_free(void) { return (uint8_t)(CR_QUEUE_CAPACITY - count); }
uint16_t motion_last_done_id(void) { return last_done_id; }
uint8_t motion_done_lost(void) { return done_lost; }

uint16_t motion_active_id(void) {
  uint8_t s = hal_irq_save();
  uint16_t id = started ? ring[head].cmd.id : (uint16_t)CR_NO_ID;
  hal_irq_restore(s);
  return id;
}

uint8_t motion_push(const MoveCmd &cmd) {
  uint8_t s = hal_irq_save();
  if (count >= CR_QUEUE_CAPACITY) {
    hal_irq_restore(s);
    return 0;
  }
  uint8_t i = (uint8_t)((head + count) % CR_QUEUE_CAPACITY);
  hal_irq_restore(s);
  /* The slot past the end is not touched by the interrupts until count
   * includes it. */
  ring[i].cmd = cmd;
  ring[i].state = S_QUEUED;
  s = hal_irq_save();
  count = (uint8_t)(count + 1);
  recheck = 1;
  hal_irq_restore(s);
  return 1;
}

uint8_t motion_pop_done(DoneRecord *out) {
  uint8_t s = hal_irq_save();
  uint8_t ok = 0;
  if (done_count) {
    *out = done_fifo[done_head];
    done_head = (uint8_t)((done_head + 1) % DONE_FIFO);
    done_count = (uint8_t)(done_count - 1);
    ok = 1;
  }
  hal_irq_restore(s);
  return ok;
}

void motion_stop(void) {
  hal_steps_low();
  count = 0;
  started = 0;
  busy = 0;
}

static void slot_start(Slot &s) {
  const MoveCmd &c = s.cmd;
  s.nch = 0;
  if (c.motor_a >= CR_SERVO_MOVE) {
    /* A servo reports nothing: the move lasts the host's travel time. */
    servo_set((uint8_t)(c.motor_a - CR_SERVO_MOVE), (uint16_t)c.steps_a);
    s.settle_left = (uint32_t)(uint16_t)c.steps_b * (CR_TICK_HZ / 1000);
    s.state = s.settle_left ? S_SETTLING : S_WAITING;
    return;
  }
  uint8_t motors[2] = {c.motor_a, c.motor_b};
  int16_t steps[2] = {c.steps_a, c.steps_b};
  for (uint8_t k = 0; k < 2; k++) {
    if (motors[k] == CR_NO_MOTOR) continue;
    Chan &ch = s.ch[s.nch++];
    ch.motor = motors[k];
    ch.bit = (uint8_t)(1 << motors[k]);
    hal_set_dir(motors[k], steps[k] > 0);
    uint16_t n = (uint16_t)(steps[k] > 0 ? steps[k] : -steps[k]);
    ch.start(n, cfg[motors[k]]);
  }
  s.state = S_RUNNING;
}

static uint32_t settle_ticks(const Slot &s) {
  uint16_t ms = 0;
  for (uint8_t k = 0; k < s.nch; k++) {
    uint16_t m = cfg[s.ch[k].motor].settle_ms;
    if (m > ms) ms = m;
  }
  return (uint32_t)ms * (CR_TICK_HZ / 1000);
}

static uint8_t disjoint(const Slot &a, const Slot &b) {
  for (uint8_t i = 0; i < a.nch; i++) {
    if (a.ch[i].motor == b.cmd.motor_a || a.ch[i].motor == b.cmd.motor_b) return 0;
  }
  return 1;
}

static void finish_head(void) {
  Slot &s = ring[head];
  if (done_count < DONE_FIFO) {
    DoneRecord &d = done_fifo[(done_head + done_count) % DONE_FIFO];
    d.id = s.cmd.id;
    d.ticks = busy;
    done_count = (uint8_t)(done_count + 1);
  } else {
    done_lost = 1;
  }
  last_done_id = s.cmd.id;
  busy = 0;
  head = (uint8_t)((head + 1) % CR_QUEUE_CAPACITY);
  count = (uint8_t)(count - 1);
  started = (uint8_t)(started - 1);
}

/* Advances one slot by one tick; returns the step mask it wants. */
static inline __attribute__((always_inline)) uint8_t slot_tick(Slot &s) {
  uint8_t mask = 0;
  if (s.state == S_RUNNING) {
    uint8_t all_done = 1;
    Chan &c0 = s.ch[0];
    if (!c0.finished()) {
      if (c0.tick()) mask = c0.bit;
      if (!c0.finished()) all_done = 0;
    }
    if (s.nch > 1) {
      Chan &c1 = s.ch[1];
      if (!c1.finished()) {
        if (c1.tick()) mask |= c1.bit;
        if (!c1.finished()) all_done = 0;
      }
    }
    if (all_done) {
      s.settle_left = settle_ticks(s);
      s.state = s.settle_left ? S_SETTLING : S_WAITING;
    }
  } else if (s.state == S_SETTLING) {
    if (--s.settle_left == 0) s.state = S_WAITING;
  }
  return mask;
}

void motion_tick(void) {
  hal_steps_low();
  if (!count) return;
  busy++;
  if (!started) {
    slot_start(ring[head]);
    started = 1;
  }
  /* Read once: head and started are volatile, and the two slots' ticks are
   * the interrupt's longest path (both run while moves overlap, and every
   * tick of that must stay under a tick's 640 cycles, or ticks are lost and
   * the motors run slower than the host's schedule). */
  uint8_t hi = head;
  uint8_t both = started > 1;
  Slot &h = ring[hi];
  uint8_t mask = slot_tick(h);
  if (both) {
    mask |= slot_tick(ring[(uint8_t)(hi + 1) % CR_QUEUE_CAPACITY]);
  } else if (mask) {
    recheck = 1; /* the head stepped: its steps left changed */
  }
  hal_steps_high(mask);

  if (both) {
    /* The overlapping successor runs: the head ends with its motion. */
    if (h.state != S_RUNNING) {
      finish_head();
      recheck = 1;
    }
  } else if (h.state == S_WAITING) {
    finish_head();
    recheck = 1;
    return;
  }
  /* Section 4.3: the next move may start once every motor of the head has
   * at most `overlap` steps left (its tick 1 is the next tick). */
  if (started == 1 && count > 1 && recheck) {
    recheck = 0;
    Slot &hd = ring[head]; /* a new head if the one above just finished */
    Slot &next = ring[(head + 1) % CR_QUEUE_CAPACITY];
    uint16_t k = next.cmd.overlap;
    if (k && hd.nch) { /* nothing overlaps a servo's travel */
      uint8_t near_end = 1;
      for (uint8_t i = 0; i < hd.nch; i++) {
        if ((uint16_t)(hd.ch[i].n - hd.ch[i].done) > k) near_end = 0;
      }
      if (near_end && disjoint(hd, next)) {
        slot_start(next);
        started = 2;
        if (hd.state != S_RUNNING) finish_head();
      }
    }
  }
}
