/* The firmware's logic on the host, driven line by line from stdin so that
 * the pytest side (tests/test_firmware_host.py) can check it against the
 * Python protocol and timing model with hypothesis.
 *
 *   reset                 fresh boot (keeps the boot counter)
 *   rx HEX                bytes arriving on the serial line (through the
 *                         receive-interrupt hook, like the real UART)
 *   loop [N]              N passes of the main loop (default 1)
 *   tick N                N timer ticks (40 us each), a main-loop pass
 *                         every 25 ticks (1 ms)
 *   tx                    bytes sent since the last `tx`, as hex
 *   steps                 per motor: steps in + / - direction, position
 *   steptimes M           the tick of every step pulse of motor M
 *   clearsteps            forget recorded step times
 *   state                 ticks, drivers, led, ignored pulses, glitches
 *   button 0|1, estop 0|1 input levels
 *   profile N VMAX ACCEL VMIN   duration T of one motor's move
 * Each command answers with one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "../cuberobot/app.h"
#include "../cuberobot/motion.h"
#include "../cuberobot/servo.h"
#include "fake_hal.h"

static void print_hex(const std::vector<uint8_t> &v) {
  for (uint8_t b : v) printf("%02x", b);
  printf("\n");
}

static void run_ticks(long n) {
  for (long i = 0; i < n; i++) {
    fake.ticks++;
    servo_tick();
    motion_tick();
    app_tick_isr();
    if (fake.ticks % 25 == 0) app_loop();
  }
}

int main() {
  char line[4096];
  setvbuf(stdout, NULL, _IOLBF, 0);
  app_setup();
  while (fgets(line, sizeof line, stdin)) {
    char *cmd = strtok(line, " \r\n");
    if (!cmd) continue;
    char *arg = strtok(NULL, " \r\n");
    if (!strcmp(cmd, "reset")) {
      uint16_t boots = fake.boot_counter;
      fake.reset();
      fake.boot_counter = boots;
      app_setup();
      printf("ok\n");
    } else if (!strcmp(cmd, "rx")) {
      size_t n = arg ? strlen(arg) / 2 : 0;
      for (size_t i = 0; i < n; i++) {
        unsigned b;
        sscanf(arg + 2 * i, "%2x", &b);
        if (!app_rx_isr((uint8_t)b)) {
          if (fake.rx.size() >= 63) {
            fake.rx_overflow = 1;
          } else {
            fake.rx.push_back((uint8_t)b);
          }
        }
      }
      printf("ok\n");
    } else if (!strcmp(cmd, "loop")) {
      long n = arg ? atol(arg) : 1;
      for (long i = 0; i < n; i++) app_loop();
      printf("ok\n");
    } else if (!strcmp(cmd, "tick")) {
      run_ticks(arg ? atol(arg) : 1);
      printf("ok\n");
    } else if (!strcmp(cmd, "tx")) {
      print_hex(fake.tx);
      fake.tx.clear();
    } else if (!strcmp(cmd, "steps")) {
      for (int m = 0; m < 6; m++) printf("%ld %ld %ld ", fake.steps[m][0], fake.steps[m][1], fake.position[m]);
      printf("\n");
    } else if (!strcmp(cmd, "steptimes")) {
      int m = arg ? atoi(arg) : 0;
      for (uint64_t t : fake.step_ticks[m]) printf("%llu ", (unsigned long long)t);
      printf("\n");
    } else if (!strcmp(cmd, "clearsteps")) {
      for (int m = 0; m < 6; m++) fake.step_ticks[m].clear();
      printf("ok\n");
    } else if (!strcmp(cmd, "state")) {
      printf("%llu %d %d %ld %ld %ld\n", (unsigned long long)fake.ticks, fake.drivers, fake.led,
             fake.ignored, fake.double_pulse, fake.dir_during_pulse);
    } else if (!strcmp(cmd, "button")) {
      fake.button = (uint8_t)(arg ? atoi(arg) : 0);
      printf("ok\n");
    } else if (!strcmp(cmd, "estop")) {
      fake.estop_input = (uint8_t)(arg ? atoi(arg) : 0);
      printf("ok\n");
    } else if (!strcmp(cmd, "profile")) {
      char *a2 = strtok(NULL, " \r\n"), *a3 = strtok(NULL, " \r\n"), *a4 = strtok(NULL, " \r\n");
      if (!arg || !a2 || !a3 || !a4) {
        printf("error: profile N VMAX ACCEL VMIN\n");
        continue;
      }
      MotorConfig c;
      c.vmax = (uint32_t)strtoul(a2, NULL, 10);
      c.accel = (uint32_t)strtoul(a3, NULL, 10);
      c.vmin = (uint32_t)strtoul(a4, NULL, 10);
      c.settle_ms = 0;
      printf("%lu\n", (unsigned long)profile_ticks((uint16_t)atol(arg), c));
    } else {
      printf("error: unknown command %s\n", cmd);
    }
  }
  return 0;
}
