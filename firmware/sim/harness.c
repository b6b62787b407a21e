/* cuberobot-sim: runs the real firmware .elf in simavr as an emulated rig.
 *
 * UART0 is bridged to a pseudo-terminal (the host's driver opens it like a
 * serial port). Every STEP/DIR/ENABLE pin is watched: step pulses are counted
 * per motor and direction, the motors' net positions become face turns on a
 * facelet cube, and an optional edge log records pin changes and received
 * bytes with cycle timestamps. Line commands on stdin (state, press,
 * set FACELETS, counts, quit) are answered with one line each on stdout; the
 * first stdout line is the pty path. Same interface as the Python virtual rig.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "avr_extint.h"
#include "avr_ioport.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_io.h"
#include "sim_irq.h"
#include "sim_time.h"

#include "pinmap.h"

#define FACES "URFDLB"
#define RX_GAP_CYCLES 1360   /* one byte at 117647 baud (UBRR 16, U2X) */
#define POLL_CYCLES 16000    /* check the pty and stdin every simulated ms */
#define PRESS_MS 100

static avr_t *avr;
static FILE *out; /* the line interface; simavr's own chatter goes to stderr */
static const struct pinmap *pm;
static int master_fd = -1;
static FILE *edge_log;
static double speed; /* pacing: times real time, 0 = as fast as possible */

static uint8_t dir_level[6];
static uint8_t step_level[6];
static uint8_t enabled;
static long long counts[6][2];
static long long ignored_pulses;
static long long position[6];
static long long quarters[6];
static int spq[6];
static int invert[6];
static int face_of[6] = {0, 1, 2, 3, 4, 5};
static long long turns[6];
static long long moves_done, boots, estops;
static char history[65536]; /* face turns since the last `set`, e.g. "U R' F2" */
static size_t history_len;
static int perm[6][54];
static char cube[55];
static uint64_t last_step_cycle;

static uint8_t txq[8192];
static size_t txq_len;
static uint8_t rxq[8192];
static size_t rxq_head, rxq_len;
static int uart_xon = 1;
static uint64_t next_rx_cycle;

static void die(const char *msg) {
  fprintf(stderr, "cuberobot-sim: %s\n", msg);
  exit(2);
}

static void log_edge(const char *name, int index, unsigned value) {
  if (!edge_log) return;
  if (index >= 0) {
    fprintf(edge_log, "%llu %s%d %u\n", (unsigned long long)avr->cycle, name, index, value);
  } else {
    fprintf(edge_log, "%llu %s %u\n", (unsigned long long)avr->cycle, name, value);
  }
}

static void turn_face(int face, int quarter_turns) {
  int q = ((quarter_turns % 4) + 4) % 4;
  if (q && history_len + 4 < sizeof history) {
    if (history_len) history[history_len++] = ' ';
    history[history_len++] = FACES[face];
    if (q == 2) history[history_len++] = '2';
    if (q == 3) history[history_len++] = '\'';
    history[history_len] = 0;
  }
  for (int t = 0; t < q; t++) {
    char next[55];
    for (int i = 0; i < 54; i++) next[i] = cube[perm[face][i]];
    next[54] = 0;
    memcpy(cube, next, 55);
  }
}

static long long nearest_quarter(long long pos, int steps) {
  long long num = 2 * pos + steps, den = 2LL * steps;
  long long q = num / den;
  if ((num % den != 0) && ((num < 0) != (den < 0))) q--;
  return q;
}

static void on_step(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  int m = (int)(intptr_t)param;
  uint8_t v = value ? 1 : 0;
  if (v == step_level[m]) return;
  step_level[m] = v;
  log_edge("step", m, v);
  if (!v) return;
  last_step_cycle = avr->cycle;
  if (!enabled) {
    ignored_pulses++;
    return;
  }
  int d = dir_level[m];
  counts[m][d ? 0 : 1]++;
  position[m] += (d ? 1 : -1) * (invert[m] ? -1 : 1);
  long long q = nearest_quarter(position[m], spq[m]);
  if (q != quarters[m]) {
    turn_face(face_of[m], (int)(q - quarters[m]));
    turns[m] += q > quarters[m] ? q - quarters[m] : quarters[m] - q;
    quarters[m] = q;
  }
}

static void on_dir(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  int m = (int)(intptr_t)param;
  uint8_t v = value ? 1 : 0;
  if (v == dir_level[m]) return;
  dir_level[m] = v;
  log_edge("dir", m, v);
}

static void on_enable(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)param;
  uint8_t en = value ? 0 : 1; /* active low */
  if (en == enabled) return;
  enabled = en;
  log_edge("en", -1, en);
}

/* Watches the firmware's own frames for DONE, EVENT BOOT and EVENT
 * ESTOP_LATCHED, so `counts` can say how many moves completed, how often the
 * firmware booted and how often its emergency stop latched. */
static uint8_t fr_buf[32];
static int fr_len = -1, fr_esc;

static uint16_t crc16(const uint8_t *d, int n) {
  uint16_t crc = 0xFFFF;
  for (int i = 0; i < n; i++) {
    crc ^= (uint16_t)d[i] << 8;
    for (int b = 0; b < 8; b++) crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
  }
  return crc;
}

static void watch_tx(uint8_t b) {
  if (b == 0x7E) {
    if (fr_len >= 4 && crc16(fr_buf, fr_len - 2) == (fr_buf[fr_len - 2] | (fr_buf[fr_len - 1] << 8))) {
      if (fr_buf[0] == 0x90) moves_done++;
      if (fr_buf[0] == 0x91 && fr_len >= 4 && fr_buf[2] == 1) boots++;
      if (fr_buf[0] == 0x91 && fr_len >= 4 && fr_buf[2] == 3) estops++; /* ESTOP_LATCHED */
    }
    fr_len = 0;
    fr_esc = 0;
    return;
  }
  if (fr_len < 0) return;
  if (b == 0x7D) {
    fr_esc = 1;
    return;
  }
  if (fr_esc) b ^= 0x20;
  fr_esc = 0;
  if (fr_len < (int)sizeof fr_buf) fr_buf[fr_len++] = b;
}

static void on_led(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)param;
  log_edge("led", -1, value ? 1 : 0);
}

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)param;
  watch_tx((uint8_t)value);
  if (txq_len < sizeof txq) txq[txq_len++] = (uint8_t)value;
}

static void on_xon(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)value;
  (void)param;
  uart_xon = 1;
}

static void on_xoff(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)value;
  (void)param;
  uart_xon = 0;
}

static avr_irq_t *pin_irq(char port, int bit) {
  return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit);
}

static int button_down;

static avr_cycle_count_t release_button(avr_t *a, avr_cycle_count_t when, void *param) {
  (void)a;
  (void)when;
  (void)param;
  button_down = 0;
  avr_raise_irq(pin_irq(pm->button_port, pm->button_bit), 1);
  return 0;
}

/* Drives the two inputs to their levels (pulled up unless the button is
 * held). A reset clears the input registers while an IRQ only propagates a
 * change, so each level is pulled down first (no cycle runs in between). */
static void drive_inputs(void) {
  avr_raise_irq(pin_irq(pm->button_port, pm->button_bit), 0);
  if (!button_down) avr_raise_irq(pin_irq(pm->button_port, pm->button_bit), 1);
  avr_raise_irq(pin_irq(pm->estop_port, pm->estop_bit), 0);
  avr_raise_irq(pin_irq(pm->estop_port, pm->estop_bit), 1);
}

/* Any reset (the `reset` command, the watchdog): the board's pull-ups keep
 * the inputs high across it. */
static void on_reset(struct avr_io_t *io) {
  (void)io;
  drive_inputs();
}

static avr_io_t harness_io = {.kind = "cuberobot-harness", .reset = on_reset};

static void print_list(const char *key, long long v0, long long v1, long long v2, long long v3,
                       long long v4, long long v5) {
  fprintf(out, "\"%s\": [%lld, %lld, %lld, %lld, %lld, %lld], ", key, v0, v1, v2, v3, v4, v5);
}

static void print_counts(void) {
  fprintf(out, "{");
  print_list("plus", counts[0][0], counts[1][0], counts[2][0], counts[3][0], counts[4][0], counts[5][0]);
  print_list("minus", counts[0][1], counts[1][1], counts[2][1], counts[3][1], counts[4][1], counts[5][1]);
  long long t[6];
  for (int m = 0; m < 6; m++) t[m] = counts[m][0] + counts[m][1];
  print_list("steps", t[0], t[1], t[2], t[3], t[4], t[5]);
  print_list("turns", turns[0], turns[1], turns[2], turns[3], turns[4], turns[5]);
  fprintf(out, "\"moves\": %lld, \"boots\": %lld, \"estops\": %lld, \"ignored\": %lld, "
          "\"cycle\": %llu, \"last_step_cycle\": %llu}\n", moves_done, boots, estops, ignored_pulses,
          (unsigned long long)avr->cycle, (unsigned long long)last_step_cycle);
}

static int valid_facelets(const char *s) {
  if (strlen(s) != 54) return 0;
  for (int i = 0; i < 54; i++) {
    if (!strchr(FACES, s[i])) return 0;
  }
  return 1;
}

/* Returns 0 to quit. */
static int command(char *line) {
  size_t n = strlen(line);
  while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ')) line[--n] = 0;
  if (edge_log) fflush(edge_log);
  if (!strcmp(line, "state")) {
    fprintf(out, "%s\n", cube);
  } else if (!strcmp(line, "press")) {
    button_down = 1;
    avr_raise_irq(pin_irq(pm->button_port, pm->button_bit), 0);
    avr_cycle_timer_register_usec(avr, PRESS_MS * 1000, release_button, NULL);
    fprintf(out, "ok\n");
  } else if (!strncmp(line, "set ", 4)) {
    if (valid_facelets(line + 4)) {
      memcpy(cube, line + 4, 55);
      history_len = 0;
      history[0] = 0;
      fprintf(out, "ok\n");
    } else {
      fprintf(out, "error: expected 54 facelets of URFDLB\n");
    }
  } else if (!strcmp(line, "counts")) {
    print_counts();
  } else if (!strcmp(line, "history")) {
    fprintf(out, "%s\n", history);
  } else if (!strcmp(line, "reset")) {
    /* The reset button (or a port opening on a real Uno): the MCU restarts,
     * the motors and the cube stay where they are. */
    avr_reset(avr);
    avr->data[0x54] |= 1 << 1; /* MCUSR.EXTRF, same address on both MCUs */
    fprintf(out, "ok\n");
  } else if (!strcmp(line, "quit")) {
    fprintf(out, "ok\n");
    fflush(out);
    return 0;
  } else {
    fprintf(out, "error: unknown command '%s' (state, press, set FACELETS, counts, quit; "
            "history, reset)\n", line);
  }
  fflush(out);
  return 1;
}

static int parse_ints(const char *s, int *out, int want, int allow_one) {
  int n = 0;
  char *copy = strdup(s), *save = NULL;
  for (char *tok = strtok_r(copy, ",;", &save); tok; tok = strtok_r(NULL, ",;", &save)) {
    if (n >= want) {
      n = -1;
      break;
    }
    char *end;
    long v = strtol(tok, &end, 10);
    if (*end) {
      n = -1;
      break;
    }
    out[n++] = (int)v;
  }
  free(copy);
  if (n == 1 && allow_one) {
    for (int i = 1; i < want; i++) out[i] = out[0];
    return 1;
  }
  return n == want;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void) {
  fprintf(stderr,
          "usage: cuberobot-sim --elf FILE [--board uno|mega] [--steps N[,N x6]]\n"
          "       [--invert 0,1,...] [--faces 0,1,2,3,4,5] --perms P [--state FACELETS]\n"
          "       [--edge-log FILE] [--speed X | --realtime]\n");
  exit(2);
}

int main(int argc, char **argv) {
  int out_fd = dup(1);
  dup2(2, 1);
  out = fdopen(out_fd, "w");
  if (!out) die("cannot set up stdout");
  const char *elf = NULL, *board = "uno", *edge = NULL, *perms = NULL, *state = NULL;
  for (int m = 0; m < 6; m++) spq[m] = 50;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--realtime")) {
      speed = 1.0;
      continue;
    }
    if (!v) usage();
    i++;
    if (!strcmp(a, "--elf")) elf = v;
    else if (!strcmp(a, "--board")) board = v;
    else if (!strcmp(a, "--edge-log")) edge = v;
    else if (!strcmp(a, "--perms")) perms = v;
    else if (!strcmp(a, "--state")) state = v;
    else if (!strcmp(a, "--speed")) {
      char *end;
      speed = strtod(v, &end);
      if (*end || speed < 0) die("--speed: times real time (0: as fast as possible)");
    } else if (!strcmp(a, "--faces")) {
      if (!parse_ints(v, face_of, 6, 0)) die("--faces: six face indices");
      for (int m = 0; m < 6; m++) if (face_of[m] < 0 || face_of[m] > 5) die("--faces: 0..5");
    }
    else if (!strcmp(a, "--steps")) {
      if (!parse_ints(v, spq, 6, 1)) die("--steps: one or six integers");
      for (int m = 0; m < 6; m++) if (spq[m] <= 0) die("--steps: must be positive");
    } else if (!strcmp(a, "--invert")) {
      if (!parse_ints(v, invert, 6, 1)) die("--invert: one or six 0/1 values");
    } else usage();
  }
  if (!elf) usage();
  if (!strcmp(board, "uno")) pm = &pinmap_uno;
  else if (!strcmp(board, "mega")) pm = &pinmap_mega;
  else die("--board must be uno or mega");
  if (perms) {
    if (!parse_ints(perms, &perm[0][0], 6 * 54, 0)) die("--perms: 6 x 54 integers");
    for (int i = 0; i < 6 * 54; i++) {
      if ((&perm[0][0])[i] < 0 || (&perm[0][0])[i] >= 54) die("--perms: out of range");
    }
  } else {
    die("--perms is required (robot/simavr_rig.py computes it from the cube model)");
  }
  for (int f = 0; f < 6; f++) memset(cube + 9 * f, FACES[f], 9);
  cube[54] = 0;
  if (state) {
    if (!valid_facelets(state)) die("--state: 54 facelets of URFDLB");
    memcpy(cube, state, 55);
  }

  elf_firmware_t fw;
  memset(&fw, 0, sizeof fw);
  if (elf_read_firmware(elf, &fw) != 0) die("cannot read the .elf file");
  strcpy(fw.mmcu, pm == &pinmap_mega ? "atmega2560" : "atmega328p");
  fw.frequency = 16000000;
  avr = avr_make_mcu_by_name(fw.mmcu);
  if (!avr) die("simavr does not know the MCU");
  avr_init(avr);
  avr->log = 0;
  avr_load_firmware(avr, &fw);
  /* The step pins D2/D3 are INT0/INT1 on an Uno and sit low: without this
   * simavr polls the level trigger every cycle (the firmware uses none). */
  avr_extint_set_strict_lvl_trig(avr, 0, 0);
  avr_extint_set_strict_lvl_trig(avr, 1, 0);

  if (edge) {
    edge_log = fopen(edge, "w");
    if (!edge_log) die("cannot write the edge log");
    setvbuf(edge_log, NULL, _IOFBF, 1 << 20);
  }
  for (int m = 0; m < 6; m++) {
    avr_irq_register_notify(pin_irq(pm->step_port, pm->step_bit[m]), on_step, (void *)(intptr_t)m);
    avr_irq_register_notify(pin_irq(pm->dir_port[m], pm->dir_bit[m]), on_dir, (void *)(intptr_t)m);
  }
  avr_irq_register_notify(pin_irq(pm->en_port, pm->en_bit), on_enable, NULL);
  avr_irq_register_notify(pin_irq(pm->led_port, pm->led_bit), on_led, NULL);
  /* Button released and e-stop switch open: both inputs pulled high. */
  drive_inputs();
  avr_register_io(avr, &harness_io);

  uint32_t flags = 0;
  avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
  flags &= ~AVR_UART_FLAG_STDIO;
  avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                          on_uart_out, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON),
                          on_xon, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF),
                          on_xoff, NULL);
  avr_irq_t *uart_in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);

  int slave_fd;
  char slave_name[256];
  if (openpty(&master_fd, &slave_fd, slave_name, NULL, NULL) != 0) die("openpty failed");
  struct termios tio;
  tcgetattr(slave_fd, &tio);
  cfmakeraw(&tio);
  tcsetattr(slave_fd, TCSANOW, &tio);
  fcntl(master_fd, F_SETFL, fcntl(master_fd, F_GETFL) | O_NONBLOCK);
  /* slave_fd stays open so that the master never sees a hang-up between
   * clients. */
  fprintf(out, "%s\n", slave_name);
  fflush(out);

  char line[1024];
  size_t line_len = 0;
  int stdin_open = 1;
  double wall0 = now_s();
  uint64_t next_poll = 0;
  for (;;) {
    int state = avr_run(avr);
    if (state == cpu_Done || state == cpu_Crashed) die("the AVR core stopped (crashed)");
    if (rxq_len && uart_xon && avr->cycle >= next_rx_cycle) {
      uint8_t b = rxq[rxq_head];
      rxq_head = (rxq_head + 1) % sizeof rxq;
      rxq_len--;
      log_edge("rx", -1, b);
      avr_raise_irq(uart_in, b);
      next_rx_cycle = avr->cycle + RX_GAP_CYCLES;
    }
    if (avr->cycle < next_poll) continue;
    next_poll = avr->cycle + POLL_CYCLES;

    if (txq_len) {
      ssize_t w = write(master_fd, txq, txq_len);
      if (w > 0) {
        memmove(txq, txq + w, txq_len - (size_t)w);
        txq_len -= (size_t)w;
      } else if (w < 0 && errno != EAGAIN) {
        txq_len = 0;
      }
    }
    while (rxq_len < sizeof rxq) {
      uint8_t buf[256];
      size_t room = sizeof rxq - rxq_len;
      ssize_t r = read(master_fd, buf, room < sizeof buf ? room : sizeof buf);
      if (r <= 0) break;
      for (ssize_t k = 0; k < r; k++) {
        rxq[(rxq_head + rxq_len) % sizeof rxq] = buf[k];
        rxq_len++;
      }
    }
    struct pollfd pfd = {0, POLLIN, 0};
    if (stdin_open && poll(&pfd, 1, 0) > 0) {
      char c;
      ssize_t r = read(0, &c, 1);
      if (r <= 0) {
        /* A closed pipe: whoever drove us is gone. /dev/null or a file:
         * serve until killed. */
        struct stat st;
        if (fstat(0, &st) == 0 && S_ISFIFO(st.st_mode)) break;
        stdin_open = 0;
        continue;
      }
      while (r > 0) {
        if (c == '\n') {
          line[line_len] = 0;
          line_len = 0;
          if (!command(line)) goto out;
        } else if (line_len < sizeof line - 1) {
          line[line_len++] = c;
        }
        if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & POLLIN)) break;
        r = read(0, &c, 1);
        if (r <= 0) break;
      }
    }
    if (speed > 0) {
      double sim = (double)avr->cycle / avr->frequency;
      double ahead = sim / speed - (now_s() - wall0);
      if (ahead > 0.002) usleep((useconds_t)(ahead * 1e6));
      /* Behind (a busy host): carry on at the pace from here instead of
         sprinting to catch up, or the rig's clock would run faster than
         the wall clock for a while and turns would look shorter than they
         are. */
      else if (ahead < -0.02) wall0 -= ahead;
    }
  }
out:
  if (edge_log) fclose(edge_log);
  /* Exit without tearing simavr down: nothing to flush there. */
  _exit(0);
}
