/* The firmware's main program: session, commands, events (docs/protocol.md). */
#ifndef CUBEROBOT_APP_H
#define CUBEROBOT_APP_H

#include <stdint.h>

void app_setup(void);
void app_loop(void);
/* Called by the serial receive interrupt for every byte; returns 1 when the
 * byte is a real-time byte (RT_ESTOP, RT_STATUS) and must not reach the frame
 * decoder. RT_ESTOP stops only as the last of a run of RT_ESTOP_RUN. */
uint8_t app_rx_isr(uint8_t byte);
/* Called by the tick interrupt (after the motion tick). */
void app_tick_isr(void);

#endif
