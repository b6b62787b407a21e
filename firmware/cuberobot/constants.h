/* Protocol constants (docs/protocol.md) and firmware-wide sizes. */
#ifndef CUBEROBOT_CONSTANTS_H
#define CUBEROBOT_CONSTANTS_H

#include <stdint.h>

#define CR_PROTOCOL_VERSION 2
#define CR_FW_MAJOR 1
#define CR_FW_MINOR 1
#define CR_FW_PATCH 0

#define CR_TICK_HZ 25000UL
#define CR_Q (1UL << 24)
#define CR_MOTORS 6
#define CR_MAX_STEPS 30000
#define CR_NO_MOTOR 0xFF
/* A queued SERVO is a MoveCmd whose motor_a is CR_SERVO_MOVE + servo,
 * steps_a its pulse in us and steps_b its travel time in ms. */
#define CR_SERVO_MOVE 0x80
#define CR_NO_ID 0xFFFF
#define CR_BAUD 115200UL

#define CR_FRAME_MAX 24 /* unescaped content: type, seq, payload, crc */

#define RT_ESTOP 0x18
#define RT_STATUS 0x05
/* The emergency stop is this many RT_ESTOP bytes in a row, nothing between
 * them; a shorter run is line noise (docs/protocol.md 1.1). */
#define RT_ESTOP_RUN 3
#define FRAME_FLAG 0x7E
#define FRAME_ESC 0x7D

enum {
  CMD_HELLO = 0x01,
  CMD_CONFIG_MOTOR = 0x02,
  CMD_CONFIG_GLOBAL = 0x03,
  CMD_MOVE = 0x04,
  CMD_STATUS = 0x05,
  CMD_CLEAR_ESTOP = 0x06,
  CMD_RELEASE = 0x07,
  CMD_CONFIG_SERVO = 0x08,
  CMD_SERVO = 0x09,
};

enum {
  REP_ACK = 0x80,
  REP_HELLO_OK = 0x81,
  REP_ERR = 0x82,
  REP_STATUS = 0x85,
  REP_STATUS_RT = 0x86,
  REP_DONE = 0x90,
  REP_EVENT = 0x91,
};

enum {
  ERR_UNKNOWN_TYPE = 2,
  ERR_BAD_LENGTH = 3,
  ERR_BAD_ARG = 4,
  ERR_NO_SESSION = 5,
  ERR_NOT_CONFIGURED = 6,
  ERR_QUEUE_FULL = 7,
  ERR_ESTOP = 8,
  ERR_VERSION = 9,
  ERR_BUSY = 10,
};

enum {
  EV_BOOT = 1,
  EV_BUTTON = 2,
  EV_ESTOP_LATCHED = 3,
  EV_ESTOP_CLEARED = 4,
};

enum { ESTOP_BY_BYTE = 1, ESTOP_BY_INPUT = 2 };

#define FLAG_SESSION 0x01
#define FLAG_ESTOP 0x02
#define FLAG_MOVING 0x04
#define FLAG_ENABLED 0x08
#define FLAG_BUTTON 0x10
#define FLAG_CONFIGURED 0x20
#define FLAG_CUT 0x40 /* an e-stop emptied a non-empty queue; cleared by the next MOVE */

#endif
