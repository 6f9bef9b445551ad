"""Render the application icon (resources/rocmpanel.svg) into the PNG sizes and the .ico.

    python scripts/make_icons.py            # write resources/icons/ (then commit them)
    python scripts/make_icons.py --check    # exit 1 if a file is missing or has the wrong size

The outputs are committed, not made at build time: the Linux install script, a plain
``pip install`` and the Windows installer all need them, and none of those should need Qt
to render an SVG first. Run this again after changing the SVG.

Outputs:
- ``resources/icons/hicolor/<N>x<N>/apps/rocmpanel.png`` for the freedesktop hicolor sizes
  (what desktop environments look up, and what ``gui.icons.app_icon`` hands Qt so small
  sizes are drawn for their size instead of scaled down from the SVG);
- ``resources/icons/rocmpanel.ico``: 16, 24, 32, 48, 64, 128 and 256 pixels, for the
  Windows executable and installer. The ICO container is written here (it is a tiny
  format) instead of through Qt's optional ``qico`` image plugin or Pillow.

ICO layout (Microsoft's "Icons" documentation): a 6-byte ICONDIR (reserved 0, type 1,
count), one 16-byte ICONDIRENTRY per image (width, height with 0 meaning 256, colour count
0, reserved 0, planes 1, bits per pixel 32, byte size, offset), then the images. Images
under 256 pixels are stored as 32-bit DIBs (a BITMAPINFOHEADER whose height counts the
colour rows and the AND mask, bottom-up BGRA rows, then a 1-bit AND mask), which every
Windows version and resource tool reads; the 256-pixel image is stored as PNG, the
convention since Windows Vista that keeps the file small.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SVG = ROOT / "resources" / "rocmpanel.svg"
ICONS = ROOT / "resources" / "icons"
ICO = ICONS / "rocmpanel.ico"
#: The freedesktop hicolor sizes (Icon Theme Specification's common sizes) up to 512.
HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
_ICO_PNG_FROM = 256  # sizes from here on are stored as PNG inside the .ico


def png_path(size: int) -> Path:
    return ICONS / "hicolor" / f"{size}x{size}" / "apps" / "rocmpanel.png"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk; ValueError when it is no PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def ico_entries(data: bytes) -> list[tuple[int, int, bytes]]:
    """(width, height, image bytes) of each image in an ICO file; ValueError when malformed."""
    if len(data) < 6:
        raise ValueError("too short for an ICO header")
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    if reserved != 0 or kind != 1 or count == 0:
        raise ValueError("not an icon file")
    entries = []
    for index in range(count):
        start = 6 + 16 * index
        w, h, _colors, _res, _planes, _bpp, size, offset = struct.unpack(
            "<BBBBHHII", data[start : start + 16]
        )
        if offset + size > len(data):
            raise ValueError(f"image {index} runs past the end of the file")
        entries.append((w or 256, h or 256, data[offset : offset + size]))
    return entries


def dib_bytes(bgra: bytes, size: int) -> bytes:
    """A 32-bit ICO DIB image from top-down BGRA rows (Qt's ARGB32 on little endian)."""
    header = struct.pack("<IiiHHIIiiII", 40, size, size * 2, 1, 32, 0, 0, 0, 0, 0, 0)
    stride = size * 4
    rows = b"".join(bgra[y * stride : (y + 1) * stride] for y in reversed(range(size)))
    mask_stride = ((size + 31) // 32) * 4  # 1 bit a pixel, rows padded to 32 bits
    return header + rows + bytes(mask_stride * size)  # all zero: alpha decides


def ico_bytes(images: dict[int, tuple[bytes, bytes]]) -> bytes:
    """The ICO file for {size: (png bytes, top-down BGRA bytes)}."""
    blobs = []
    for size in sorted(images):
        png, bgra = images[size]
        blobs.append((size, png if size >= _ICO_PNG_FROM else dib_bytes(bgra, size)))
    out = struct.pack("<HHH", 0, 1, len(blobs))
    offset = 6 + 16 * len(blobs)
    for size, blob in blobs:
        dim = 0 if size >= 256 else size
        out += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
    return out + b"".join(blob for _size, blob in blobs)


def render(size: int) -> tuple[bytes, bytes]:
    """The SVG drawn at ``size`` pixels: (PNG bytes, top-down BGRA bytes)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise SystemExit(f"{SVG}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    straight = image.convertToFormat(QImage.Format.Format_ARGB32)  # DIBs are not premultiplied
    buffer = QByteArray()
    device = QBuffer(buffer)
    device.open(QIODevice.OpenModeFlag.WriteOnly)
    if not straight.save(device, "PNG"):
        raise SystemExit(f"could not encode the {size}px PNG")
    device.close()
    bgra = bytes(straight.constBits())[: size * size * 4]  # rows are 4*size bytes: no padding
    return bytes(buffer.data()), bgra


def write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # atomic: a half-written icon never lands
    return True


def generate() -> None:
    from PySide6.QtGui import QGuiApplication

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    rendered = {size: render(size) for size in sorted(set(HICOLOR_SIZES) | set(ICO_SIZES))}
    for size in HICOLOR_SIZES:
        if write_if_changed(png_path(size), rendered[size][0]):
            print(f"wrote {png_path(size).relative_to(ROOT)}")
    if write_if_changed(ICO, ico_bytes({size: rendered[size] for size in ICO_SIZES})):
        print(f"wrote {ICO.relative_to(ROOT)}")
    del app


def check() -> list[str]:
    """What is missing or wrong among the generated files (empty when all is well)."""
    problems = []
    for size in HICOLOR_SIZES:
        path = png_path(size)
        if not path.exists():
            problems.append(f"{path.relative_to(ROOT)}: missing")
        elif png_size(path.read_bytes()) != (size, size):
            problems.append(f"{path.relative_to(ROOT)}: not {size}x{size}")
    if not ICO.exists():
        problems.append(f"{ICO.relative_to(ROOT)}: missing")
    else:
        sizes = sorted(w for w, _h, _blob in ico_entries(ICO.read_bytes()))
        if sizes != sorted(ICO_SIZES):
            problems.append(f"{ICO.relative_to(ROOT)}: sizes {sizes}, want {list(ICO_SIZES)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the committed files")
    args = parser.parse_args(argv)
    if not args.check:
        generate()
    problems = check()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
