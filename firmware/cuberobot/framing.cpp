#include "framing.h"

uint16_t crc16_ccitt(const uint8_t *data, uint8_t n) {
  uint16_t crc = 0xFFFF;
  for (uint8_t i = 0; i < n; i++) {
    crc ^= (uint16_t)data[i] << 8;
    for (uint8_t b = 0; b < 8; b++) {
      crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
  }
  return crc;
}

void FrameDecoder::reset() {
  len = 0;
  in_frame = 0;
  escape = 0;
  overlong = 0;
  delivered = 0;
}

uint8_t FrameDecoder::feed(uint8_t byte) {
  if (delivered) {
    len = 0;
    delivered = 0;
  }
  if (byte == FRAME_FLAG) {
    uint8_t result = FRAME_NONE;
    if (in_frame) {
      if (overlong) {
        result = FRAME_BAD;
      } else if (len >= 4) {
        uint16_t crc = crc16_ccitt(buf, (uint8_t)(len - 2));
        uint16_t got = (uint16_t)(buf[len - 2] | ((uint16_t)buf[len - 1] << 8));
        if (crc == got) {
          len = (uint8_t)(len - 2);
          delivered = 1;
          result = FRAME_OK;
        } else {
          result = FRAME_BAD;
        }
      }
    }
    in_frame = 1;
    escape = 0;
    overlong = 0;
    if (result != FRAME_OK) len = 0;
    return result;
  }
  if (!in_frame) return FRAME_NONE;
  if (byte == FRAME_ESC) {
    escape = 1;
    return FRAME_NONE;
  }
  if (escape) {
    byte ^= 0x20;
    escape = 0;
  }
  if (len < CR_FRAME_MAX) {
    buf[len++] = byte;
  } else {
    overlong = 1;
  }
  return FRAME_NONE;
}

static uint8_t put_escaped(uint8_t *out, uint8_t pos, uint8_t b) {
  if (b == FRAME_FLAG || b == FRAME_ESC || b == RT_ESTOP || b == RT_STATUS) {
    out[pos++] = FRAME_ESC;
    out[pos++] = (uint8_t)(b ^ 0x20);
  } else {
    out[pos++] = b;
  }
  return pos;
}

uint8_t frame_encode(const uint8_t *content, uint8_t n, uint8_t *out) {
  uint8_t pos = 0;
  out[pos++] = FRAME_FLAG;
  for (uint8_t i = 0; i < n; i++) pos = put_escaped(out, pos, content[i]);
  uint16_t crc = crc16_ccitt(content, n);
  pos = put_escaped(out, pos, (uint8_t)(crc & 0xFF));
  pos = put_escaped(out, pos, (uint8_t)(crc >> 8));
  out[pos++] = FRAME_FLAG;
  return pos;
}
