"""The committed icon renderings (scripts/make_icons.py) and what app_icon() gives Qt."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

import make_icons  # noqa: E402


@pytest.mark.parametrize("size", make_icons.HICOLOR_SIZES)
def test_each_hicolor_png_exists_at_its_size(size: int) -> None:
    path = ROOT / "resources" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "rocmpanel.png"
    assert make_icons.png_size(path.read_bytes()) == (size, size)


def test_hicolor_sizes_span_16_to_512() -> None:
    assert {16, 24, 32, 48, 64, 128, 256, 512} <= set(make_icons.HICOLOR_SIZES)


def test_the_ico_holds_every_windows_size() -> None:
    entries = make_icons.ico_entries((ROOT / "resources" / "icons" / "rocmpanel.ico").read_bytes())
    assert sorted(w for w, _h, _blob in entries) == [16, 24, 32, 48, 64, 128, 256]
    for width, height, blob in entries:
        assert width == height
        if width >= 256:
            assert make_icons.png_size(blob) == (256, 256)
        else:  # a 32-bit DIB whose height counts the colour rows and the AND mask
            size, w, h, _planes, bpp = struct.unpack("<IiiHH", blob[:16])
            assert (size, w, h, bpp) == (40, width, 2 * width, 32)
            mask = ((width + 31) // 32) * 4 * width
            assert len(blob) == 40 + width * width * 4 + mask


def test_ico_writer_and_reader_agree() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\0\0\0\x0dIHDR" + struct.pack(">II", 256, 256) + b"rest"
    data = make_icons.ico_bytes({16: (b"", bytes(16 * 16 * 4)), 256: (png, b"")})
    entries = make_icons.ico_entries(data)
    assert [(w, h) for w, h, _blob in entries] == [(16, 16), (256, 256)]
    assert entries[1][2] == png


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\0\0\2\0\1\0" + bytes(16),
        b"\0\0\1\0\1\0" + struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, 99, 22),
    ],
    ids=["empty", "cursor-not-icon", "runs-past-the-end"],
)
def test_ico_reader_rejects_broken_files(data: bytes) -> None:
    with pytest.raises(ValueError):
        make_icons.ico_entries(data)


def test_png_reader_rejects_other_files() -> None:
    with pytest.raises(ValueError):
        make_icons.png_size(b"GIF89a" + bytes(30))


def test_check_passes_on_the_committed_files() -> None:
    assert make_icons.check() == []


def test_app_icon_uses_the_renderings_at_their_sizes_and_the_svg_between(
    qapp, monkeypatch, tmp_path
) -> None:
    """Green stand-ins for the PNGs show which source Qt drew each size from."""
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QColor, QImage

    from rocmpanel.gui import icons

    assert icons.ICON_SIZES == make_icons.HICOLOR_SIZES
    for size in icons.ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(QColor("#00ff00"))
        assert image.save(str(tmp_path / f"{size}.png"))
    monkeypatch.setattr(icons, "png_path", lambda size: tmp_path / f"{size}.png")
    icon = icons.app_icon()

    def colour(size: int, dpr: float = 1.0) -> str:
        pixmap = icon.pixmap(QSize(size, size), dpr)
        return pixmap.toImage().pixelColor(pixmap.width() // 2, pixmap.height() // 2).name()

    assert colour(16) == colour(48) == colour(512) == "#00ff00"
    assert colour(16, 2.0) == "#00ff00"  # a 2x screen gets the 32 px rendering
    assert colour(100) != "#00ff00"  # no rendering at 100 px: drawn from the SVG


def test_app_icon_without_renderings_is_the_svg(qapp, monkeypatch, tmp_path) -> None:
    from rocmpanel.gui import icons

    monkeypatch.setattr(icons, "png_path", lambda size: tmp_path / f"{size}.png")
    icon = icons.app_icon()
    assert not icon.isNull()
    assert icon.pixmap(64, 64).width() == 64


def test_qt_reads_the_ico_as_the_pngs_it_was_made_from(qapp) -> None:
    """An independent reader (Qt's qico plugin): each image, DIB or PNG, decodes to the
    same pixels as the hicolor PNG of its size (so the DIB rows are not upside down)."""
    from PySide6.QtGui import QImage, QImageReader

    if b"ico" not in [bytes(f.data()) for f in QImageReader.supportedImageFormats()]:
        pytest.skip("Qt's ICO image plugin is not installed")
    reader = QImageReader(str(ROOT / "resources" / "icons" / "rocmpanel.ico"))
    assert reader.imageCount() == len(make_icons.ICO_SIZES)
    for index in range(reader.imageCount()):
        assert reader.jumpToImage(index)
        image = reader.read().convertToFormat(QImage.Format.Format_ARGB32)
        size = image.width()
        png = QImage(str(make_icons.png_path(size))).convertToFormat(QImage.Format.Format_ARGB32)
        assert image == png, f"{size} px"
