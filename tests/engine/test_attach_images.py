"""Pictures prepared to attach (`engine.attach.prepare_image`), with real files made here.

Each picture is read by the real child process. The output bytes are checked themselves:
no metadata survives (a phone photo's GPS position never leaves the machine), the
orientation is applied, the size fits the target, and a decompression bomb or a file that
lies about its type is refused with a sentence.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
from pathlib import Path

import pytest
from PIL import Image

from engine import AttachmentError
from engine.attach import ImageTarget, extract_document, prepare_image

from .attach_helpers import animated_gif, bomb_png, make_pdf, photo_with_gps


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


async def test_a_photo_loses_its_gps_position_and_every_other_tag(tmp_path: Path) -> None:
    source = photo_with_gps()
    assert b"PhoneMaker" in source and b"Exif" in source  # the file really carries them
    prepared = await prepare_image(write(tmp_path, "IMG_0001.jpg", source))
    out = prepared.blob.data
    assert b"Exif" not in out and b"PhoneMaker" not in out and b"GPS" not in out
    image = Image.open(io.BytesIO(out))
    assert dict(image.getexif()) == {}
    assert image.getexif().get_ifd(0x8825) == {}
    assert "exif" not in image.info and "icc_profile" not in image.info
    assert prepared.part.blob == hashlib.sha256(out).hexdigest() == prepared.blob.sha256
    assert prepared.part.size == len(out) and prepared.part.name == "IMG_0001.jpg"


async def test_a_photo_is_turned_as_its_orientation_says(tmp_path: Path) -> None:
    # 400 × 200, left half red, orientation 6: shown turned a quarter clockwise, 200 × 400,
    # red on top.
    prepared = await prepare_image(write(tmp_path, "turned.jpg", photo_with_gps()))
    assert (prepared.part.width, prepared.part.height) == (200, 400)
    assert (prepared.original_width, prepared.original_height) == (400, 200)
    image = Image.open(io.BytesIO(prepared.blob.data)).convert("RGB")
    assert image.size == (200, 400)
    red, green, blue = image.getpixel((100, 80))
    assert red > 200 and blue < 60
    red, green, blue = image.getpixel((100, 320))
    assert blue > 200 and red < 60
    assert prepared.part.media_type == "image/jpeg" and not prepared.animated


async def test_a_large_screenshot_is_downscaled_and_stays_lossless(tmp_path: Path) -> None:
    image = Image.new("RGB", (4000, 1000), (250, 250, 250))
    image.paste((20, 20, 20), (100, 100, 3900, 140))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    prepared = await prepare_image(write(tmp_path, "screen.png", buffer.getvalue()))
    assert (prepared.part.width, prepared.part.height) == (2048, 512)
    assert prepared.part.media_type == "image/png"
    assert Image.open(io.BytesIO(prepared.blob.data)).size == (2048, 512)


async def test_a_picture_is_made_to_fit_the_byte_budget(tmp_path: Path) -> None:
    rng = random.Random(7)
    noise = Image.frombytes("RGB", (1200, 1200), rng.randbytes(1200 * 1200 * 3))
    buffer = io.BytesIO()
    noise.save(buffer, "PNG")
    assert len(buffer.getvalue()) > 4_000_000
    target = ImageTarget(long_side=1200, max_bytes=150_000)
    prepared = await prepare_image(write(tmp_path, "noise.png", buffer.getvalue()), target=target)
    assert prepared.part.size <= 150_000
    assert prepared.part.media_type in ("image/jpeg", "image/webp")
    decoded = Image.open(io.BytesIO(prepared.blob.data))
    assert decoded.size == (prepared.part.width, prepared.part.height)


async def test_transparency_is_kept(tmp_path: Path) -> None:
    image = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    image.paste((255, 0, 0, 255), (0, 0, 32, 32))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    prepared = await prepare_image(write(tmp_path, "icon.png", buffer.getvalue()))
    decoded = Image.open(io.BytesIO(prepared.blob.data))
    assert prepared.part.media_type == "image/png" and decoded.mode == "RGBA"
    assert decoded.getpixel((48, 48))[3] == 0 and decoded.getpixel((8, 8))[3] == 255


async def test_an_animated_picture_gives_its_first_frame_and_says_so(tmp_path: Path) -> None:
    prepared = await prepare_image(write(tmp_path, "moving.gif", animated_gif(3)))
    assert prepared.animated and prepared.frames == 3
    decoded = Image.open(io.BytesIO(prepared.blob.data))
    assert getattr(decoded, "n_frames", 1) == 1
    assert (prepared.part.width, prepared.part.height) == (32, 16)


async def test_a_decompression_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    path = write(tmp_path, "bomb.png", bomb_png(100_000))
    assert path.stat().st_size < 10_000
    with pytest.raises(AttachmentError) as caught:
        await prepare_image(path)
    assert caught.value.key == "attach.bomb"
    assert "100000 × 100000" in str(caught.value) and "bomb.png" in str(caught.value)
    assert "100000 × 100000" in caught.value.sentence("zh_CN")
    # The caller carries on: the next picture is prepared as usual.
    assert (await prepare_image(write(tmp_path, "ok.gif", animated_gif(1)))).frames == 1


async def test_an_executable_named_as_a_picture_is_refused(tmp_path: Path) -> None:
    elf = b"\x7fELF\x02\x01\x01\x00" + bytes(200)
    with pytest.raises(AttachmentError) as caught:
        await prepare_image(write(tmp_path, "holiday.png", elf))
    assert caught.value.key == "attach.wrong_type" and "PNG" in str(caught.value)
    with pytest.raises(AttachmentError) as caught:
        await prepare_image(write(tmp_path, "holiday.webp", b"RIFF\x00\x00\x00\x00AVI LIST"))
    assert caught.value.key == "attach.wrong_type"


async def test_a_damaged_picture_is_refused_with_a_sentence(tmp_path: Path) -> None:
    whole = photo_with_gps()
    with pytest.raises(AttachmentError) as caught:
        await prepare_image(write(tmp_path, "cut.jpg", whole[:300]))
    assert caught.value.key == "attach.unreadable"
    assert "cut.jpg" in caught.value.sentence("zh_CN")


async def test_pictures_and_documents_are_each_read_by_their_own_function(tmp_path: Path) -> None:
    with pytest.raises(AttachmentError) as caught:
        await prepare_image(write(tmp_path, "a.pdf", make_pdf(["x"])))
    assert caught.value.key == "attach.unsupported"
    with pytest.raises(AttachmentError) as caught:
        await extract_document(write(tmp_path, "b.png", bomb_png(10)))
    assert caught.value.key == "attach.unsupported"


def test_an_image_target_is_checked() -> None:
    with pytest.raises(ValueError):
        ImageTarget(long_side=0)
    with pytest.raises(ValueError):
        ImageTarget(formats=("image/bmp",))
    assert os.fspath(Path("x")) == "x"
