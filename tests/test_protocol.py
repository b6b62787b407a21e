"""Frames, escaping, CRC and messages of docs/protocol.md."""

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robot.rig import protocol as P


def _bitwise_crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit, as the firmware computes it."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
        crc &= 0xFFFF
    return crc


def test_crc_check_value():
    assert P.crc16(b"123456789") == 0x29B1


@given(st.binary(max_size=64))
def test_crc_equals_the_bitwise_definition(data):
    assert P.crc16(data) == _bitwise_crc16(data)


def test_codes_are_enums_with_their_protocol_values():
    assert P.ErrorCode.QUEUE_FULL == 7 and P.ErrorCode.ESTOP is P.ErrorCode.ESTOP
    assert P.Err(P.ErrorCode.BUSY, 0).name == "BUSY" and P.Err(99, 0).name == "error 99"
    assert P.StatusFlag.SESSION | P.StatusFlag.MOVING == 5 and P.EventCode.BUTTON == 2


def test_documented_example_bytes():
    content = bytes.fromhex("040C0700002003" "03E0FC0000")
    frame = P.encode(P.MoveCommand(7, 0, 800, 3, -800, 0), 12)
    crc = P.crc16(content)
    assert frame == b"\x7e" + P.escape(content + bytes((crc & 0xFF, crc >> 8))) + b"\x7e"


_u8 = st.integers(0, 255)
_u16 = st.integers(0, 0xFFFF)
_u32 = st.integers(0, 0xFFFFFFFF)
_i16 = st.integers(-0x8000, 0x7FFF)
MESSAGES = st.one_of(
    st.builds(P.Hello, _u8),
    st.builds(P.ConfigMotor, _u8, _u32, _u32, _u32, _u16),
    st.builds(P.ConfigGlobal, _u16),
    st.builds(P.MoveCommand, _u16, _u8, _i16, _u8, _i16, _u16),
    st.just(P.StatusQuery()), st.just(P.ClearEstop()), st.just(P.Release()),
    st.builds(P.ConfigServo, _u8, _u16, _u16),
    st.builds(P.ServoCommand, _u16, _u8, _u16, _u16),
    st.builds(P.Ack, _u8),
    st.builds(P.HelloOk, _u8, _u8, _u8, _u8, _u8, _u8, _u16, _u16),
    st.builds(P.Err, _u8, _u8),
    st.builds(P.Status, _u16, _u8, _u16, _u16, _u8, _u32, _u8),
    st.builds(P.RealtimeStatus, _u16, _u8, _u16, _u16, _u8, _u32, _u8),
    st.builds(P.Done, _u16, _u32, _u8),
    st.builds(P.Event, _u8, _u8),
)


@given(MESSAGES, st.integers(1, 255), st.binary(max_size=40))
def test_round_trip_after_garbage(msg, seq, garbage):
    frame = P.encode(msg, seq)
    assert len(frame) <= P.MAX_FRAME
    inner = frame[1:-1]
    # Real-time bytes and delimiters never appear inside a frame.
    assert not set(inner) & {P.FLAG, P.RT_ESTOP, P.RT_STATUS}
    dec = P.FrameDecoder()
    out = dec.feed(garbage + frame)
    assert out and P.decode(out[-1]) == (seq, msg)


@given(MESSAGES, st.integers(1, 255), st.data())
def test_a_corrupted_byte_never_yields_a_wrong_message(msg, seq, data):
    frame = bytearray(P.encode(msg, seq))
    i = data.draw(st.integers(1, len(frame) - 2))
    new = data.draw(st.integers(0, 255).filter(lambda b: b != frame[i]))
    frame[i] = new
    dec = P.FrameDecoder()
    for content in dec.feed(bytes(frame) + P.encode(P.Ack(3), 9)):
        s, m = P.decode(content)
        assert (s, m) in {(seq, msg), (9, P.Ack(3))}
        if (s, m) == (seq, msg):
            pytest.fail("corrupted frame accepted")
    # The following good frame always gets through.
    dec2 = P.FrameDecoder()
    assert P.decode(dec2.feed(bytes(frame) + P.encode(P.Ack(3), 9))[-1]) == (9, P.Ack(3))


def test_realtime_bytes_are_seen_inside_frames_on_the_firmware_side():
    frame = P.encode(P.StatusQuery(), 5)
    dec = P.FrameDecoder(realtime=True)
    out = dec.feed(frame[:3] + bytes((P.RT_ESTOP,)) + frame[3:])
    assert out[0] == P.RT_ESTOP and P.decode(out[1]) == (5, P.StatusQuery())


def test_oversized_and_short_frames_are_dropped_and_counted():
    dec = P.FrameDecoder()
    assert dec.feed(b"\x7e" + b"\x01" * 30 + b"\x7e") == []
    assert dec.feed(b"\x7e\x7e\x01\x02\x7e") == []
    assert dec.errors == 2


def test_decode_rejects_unknown_types_and_bad_lengths():
    with pytest.raises(P.ProtocolError) as e:
        P.decode(bytes((0x42, 1)))
    assert e.value.code == P.ErrorCode.UNKNOWN_TYPE
    with pytest.raises(P.ProtocolError) as e:
        P.decode(bytes((0x04, 1)) + struct.pack("<H", 3))
    assert e.value.code == P.ErrorCode.BAD_LENGTH


def test_sequence_numbers_skip_zero():
    assert P.next_seq(254) == 255 and P.next_seq(255) == 1 and P.next_seq(1) == 2
