"""Checks a report.html as Chromium renders it: the screenshot is not blank, every chart of the
DOM has a data mark, and no src/href attribute names a network URL.

usage: report_html_check.py PAGE.html SCREENSHOT.png DOM.html MIN_CHARTS
"""
import re
import struct
import sys
import zlib
from html.parser import HTMLParser


def png_pixels(path):
    """(width, height, bytes per pixel, rows of raw pixel bytes) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"{path}: unexpected PNG {header}"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


class Charts(HTMLParser):
    """Counts <svg> elements and the elements with class "mark" inside each; collects URLs."""

    def __init__(self):
        super().__init__()
        self.marks = []
        self.depth = 0
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href", "xlink:href", "action", "srcset"):
            if name in attrs and re.match(r"\s*(https?:)?//", attrs[name] or ""):
                self.urls.append((tag, name, attrs[name]))
        if tag == "link" or tag == "script" and "src" in attrs:
            self.urls.append((tag, "element", str(attrs)))
        if tag == "svg":
            self.marks.append(0)
            self.depth += 1
        elif self.depth and "mark" in (attrs.get("class") or "").split():
            self.marks[-1] += 1

    def handle_endtag(self, tag):
        if tag == "svg":
            self.depth -= 1


def main():
    page, shot, dom, min_charts = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    width, height, bpp, rows = png_pixels(shot)
    colours = set()
    for row in rows[::7]:
        for x in range(0, width * bpp, bpp * 5):
            colours.add(row[x:x + 3])
    assert len(colours) > 10, f"screenshot {width}x{height} looks blank: {len(colours)} colours"
    for name, text in (("page", open(page).read()), ("dom", open(dom).read())):
        charts = Charts()
        charts.feed(text)
        assert not charts.urls, f"{name}: network references {charts.urls}"
        assert len(charts.marks) >= min_charts, f"{name}: {len(charts.marks)} charts < {min_charts}"
        empty = [i for i, n in enumerate(charts.marks) if n == 0]
        assert not empty, f"{name}: charts {empty} have no data mark ({charts.marks})"
    print(f"ok: {len(colours)} colours sampled, {len(charts.marks)} charts, marks {charts.marks}")


if __name__ == "__main__":
    main()
