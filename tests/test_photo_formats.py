"""Every kind of photo a maker's phone or camera saves, read through the
one loader the scan, the panel and `cuberobot scan --images` share
(vision/photos.py ``load_photo``): each accepted kind decoded at the size
its header says, and each damaged, refused or oversized file refused from
its header alone, in one line that names the photo and says what to do.

The pictures are real files encoded by OpenCV (baseline and progressive
JPEG, PNG, lossy and lossless WebP, BMP in both header styles), then cut,
padded or relabelled byte by byte as a broken upload or a half-copied
card leaves them.
"""

from __future__ import annotations

import functools
import os
import struct

import cv2
import numpy as np
import pytest

from vision.photos import (
    ACCEPTED,
    MAX_PHOTO_BYTES,
    MAX_PHOTO_PIXELS,
    SAMPLE_SIDE,
    PhotoError,
    Probe,
    check_size,
    load_photo,
    probe,
)

W, H = 2400, 1800  # twice SAMPLE_SIDE and more: every kind is kept at half its size


@functools.cache
def _picture() -> np.ndarray:
    """A photo-like picture: a gradient with a few blocks of colour."""
    y, x = np.mgrid[0:H, 0:W]
    img = np.stack([(x * 255 // W), (y * 255 // H), ((x + y) * 255 // (W + H))], axis=-1).astype(np.uint8)
    img[200:600, 200:600] = (30, 40, 200)
    img[1000:1600, 1400:2000] = (240, 240, 240)
    return img


@functools.cache
def _encoded(ext: str, *params: int) -> bytes:
    ok, buf = cv2.imencode(ext, _picture(), list(params))
    assert ok, ext
    return buf.tobytes()


KINDS = {
    "jpeg": (".jpg", (), "JPEG"),
    "progressive jpeg": (".jpg", (cv2.IMWRITE_JPEG_PROGRESSIVE, 1), "JPEG"),
    "png": (".png", (), "PNG"),
    "lossy webp": (".webp", (cv2.IMWRITE_WEBP_QUALITY, 80), "WebP"),
    "lossless webp": (".webp", (cv2.IMWRITE_WEBP_QUALITY, 101), "WebP"),
    "bmp": (".bmp", (), "BMP"),
}


@pytest.mark.parametrize("name", KINDS)
def test_each_accepted_kind_is_sized_from_its_header_and_read(name, tmp_path):
    ext, params, kind = KINDS[name]
    data = _encoded(ext, *params)
    found = probe(data)
    assert isinstance(found, Probe), found
    assert (found.kind, found.width, found.height) == (kind, W, H)
    path = tmp_path / f"F{ext}"
    path.write_bytes(data)
    img, scale = load_photo(path, "F photo")
    # every kind is kept at the same reduced size, its long side still above SAMPLE_SIDE
    assert scale == 0.5 and img.shape == (H // 2, W // 2, 3), (name, img.shape, scale)
    assert max(img.shape[:2]) >= SAMPLE_SIDE
    # what was decoded is the picture, not noise: the white block is white, the red one red
    assert img[1300 // 2, 1700 // 2].min() > 200 and img[400 // 2, 400 // 2][2] > 150


def test_a_progressive_jpeg_is_priced_as_its_whole_coefficient_buffer():
    """A progressive JPEG is decoded through a buffer of the whole picture
    even when reduced; a baseline one of one scan needs none: the limits differ."""
    base, prog = probe(_encoded(".jpg")), probe(_encoded(".jpg", cv2.IMWRITE_JPEG_PROGRESSIVE, 1))
    assert isinstance(base, Probe) and isinstance(prog, Probe)
    assert base.bytes_per_pixel == 0 and base.max_pixels == MAX_PHOTO_PIXELS
    assert prog.bytes_per_pixel > 0 and prog.max_pixels < MAX_PHOTO_PIXELS


def test_padding_and_stray_bytes_between_a_jpegs_segments_are_stepped_over():
    """Fill bytes (0xFF 0xFF ...) and junk between segments, as some cameras
    and editors leave them: the decoder skips them, and so does the probe."""
    data = _encoded(".jpg")
    end = 4 + int.from_bytes(data[4:6], "big")  # after the first segment (APP0)
    padded = data[:end] + b"junk" + b"\xff\xff" + data[end:]
    found = probe(padded)
    assert isinstance(found, Probe) and (found.width, found.height) == (W, H)


def _os2_bmp(width: int, height: int) -> bytes:
    """A BMP with the old OS/2 header (12 bytes, 16-bit sizes), 24-bit pixels."""
    row = (width * 3 + 3) & ~3
    pixels = bytes(row * height)
    header = struct.pack("<IHHHH", 12, width, height, 1, 24)
    offset = 14 + len(header)
    return b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset) + header + pixels


def test_an_os2_bmp_and_a_top_down_bmp_are_sized_right():
    found = probe(_os2_bmp(640, 480))
    assert isinstance(found, Probe) and (found.kind, found.width, found.height) == ("BMP", 640, 480)
    data = bytearray(_encoded(".bmp"))
    data[22:26] = struct.pack("<i", -H)  # stored top-down: the height is negative
    found = probe(bytes(data))
    assert isinstance(found, Probe) and (found.width, found.height) == (W, H)


CUT = {  # a file cut short where its size would be, as a half-copied card leaves it
    "jpeg": (".jpg", 20),
    "png": (".png", 20),
    "webp": (".webp", 20),
    "bmp": (".bmp", 20),
}


@pytest.mark.parametrize("name", CUT)
def test_a_header_cut_short_is_a_damaged_photo_in_one_line(name, tmp_path):
    ext, keep = CUT[name]
    path = tmp_path / f"U{ext}"
    path.write_bytes(_encoded(ext)[:keep])
    with pytest.raises(PhotoError) as e:
        load_photo(path, "U photo")
    line = str(e.value)
    assert "\n" not in line and line.startswith("U photo: a ") and "damaged" in line, line
    assert f"save it again as a {ACCEPTED} photo" in line, line


def test_a_jpeg_with_two_frames_or_a_scan_before_its_frame_is_damaged():
    data = _encoded(".jpg")
    sof = data.index(b"\xff\xc0")
    length = int.from_bytes(data[sof + 2:sof + 4], "big")
    twice = data[:sof + 2 + length] + data[sof:sof + 2 + length] + data[sof + 2 + length:]
    assert "damaged" in str(probe(twice))
    sos = data.index(b"\xff\xda")
    no_frame = data[:sof] + data[sof + 2 + length:]
    assert sos > sof and "damaged" in str(probe(no_frame))
    assert "damaged" in str(probe(data[:sof + 6]))  # the frame's own segment cut short


def test_refused_and_unknown_kinds_say_which_kinds_are_read():
    for data, kind in ((b"GIF89a" + bytes(40), "GIF"), (b"II*\x00" + bytes(40), "TIFF"),
                       (b"\x00\x00\x00\x18ftypheic" + bytes(40), "AVIF or HEIF")):
        said = probe(data)
        assert isinstance(said, str) and said.startswith(f"{kind} images are not read here"), said
        assert ACCEPTED in said
    said = probe(b"hello, this is a text file")
    assert said == f"not an image this reads; give a {ACCEPTED} photo"


def test_a_header_claiming_a_huge_or_empty_picture_is_refused_before_decoding():
    big = r"^L photo: 20000x20000 pixels is too big \(at most 64 megapixels\)"
    with pytest.raises(PhotoError, match=big):
        check_size(Probe("JPEG", 20000, 20000, 0), "L photo")
    png = (r"^L photo: 5000x5000 pixels is too big \(at most 19 megapixels for a PNG like this one\); "
           r"resize it$")
    with pytest.raises(PhotoError, match=png):
        check_size(Probe("PNG", 5000, 5000, 9), "L photo")
    with pytest.raises(PhotoError, match="damaged"):
        check_size(Probe("BMP", 0, 480, 9), "L photo")


def test_what_is_not_a_regular_photo_file_is_named(tmp_path):
    cases = {}
    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    cases[fifo] = "is a FIFO (a named pipe), not a regular file"  # opened without waiting for a writer
    (tmp_path / "folder.jpg").mkdir()
    cases[tmp_path / "folder.jpg"] = "is a folder, not a photo"
    cases[tmp_path / "missing.jpg"] = "file not found"
    huge = tmp_path / "huge.jpg"
    with open(huge, "wb") as f:
        f.truncate(MAX_PHOTO_BYTES + 1)  # sparse: nothing written
    cases[huge] = f"{MAX_PHOTO_BYTES + 1} bytes is too big for a photo"
    cases[tmp_path / "nul\0.jpg"] = "cannot read"
    for path, said in cases.items():
        with pytest.raises(PhotoError) as e:
            load_photo(path, "B photo")
        assert str(e.value).startswith("B photo: ") and said in str(e.value), (path, e.value)


def test_a_photo_too_small_to_show_nine_stickers_is_refused(tmp_path):
    path = tmp_path / "tiny.png"
    cv2.imwrite(str(path), _picture()[:100, :100])
    with pytest.raises(PhotoError, match=r"100x100 pixels is too small to read stickers from"):
        load_photo(path, "R photo")
