/* Frames on the wire: 0x7E delimiters, 0x7D escaping, CRC-16/CCITT-FALSE. */
#ifndef CUBEROBOT_FRAMING_H
#define CUBEROBOT_FRAMING_H

#include <stdint.h>
#include "constants.h"

uint16_t crc16_ccitt(const uint8_t *data, uint8_t n);

/* Receiver: feed bytes one at a time; a complete frame with a good CRC is
 * reported by feed() returning FRAME_OK, its content (type, seq, payload,
 * without CRC) in buf[0..len). */
enum { FRAME_NONE = 0, FRAME_OK = 1, FRAME_BAD = 2 };

struct FrameDecoder {
  uint8_t buf[CR_FRAME_MAX];
  uint8_t len;
  uint8_t in_frame;
  uint8_t escape;
  uint8_t overlong;
  uint8_t delivered; /* buf holds a delivered frame until the next byte */

  void reset();
  /* A broken frame (CRC, overlong) yields FRAME_BAD once. */
  uint8_t feed(uint8_t byte);
};

/* Encodes content + CRC, escaped and delimited, into out (at least
 * 2 * (n + 2) + 2 bytes); returns the encoded length. */
uint8_t frame_encode(const uint8_t *content, uint8_t n, uint8_t *out);

#endif
