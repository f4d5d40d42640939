# SPDX-License-Identifier: MIT
# Checks a screenshot of `denytrace report --format svg`, with nothing but
# the standard library: decodes the PNG (zlib and the five row filters) and
# prints what a reader would see:
#   "lanes N": separate bands of rows holding refusal marks in the plot
#   "writes N": rows holding the green of successful writes
#   "files N": rows holding the blue of a side file that existed
#   "inked N": pixels that are not white
# Usage: timeline_png.py SHOT.png
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, colour, _, _, interlace = hdr
    assert depth == 8 and colour in (2, 6) and not interlace, hdr
    bpp = 3 if colour == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def near(px, rgb, tol=40):
    return all(abs(p - q) <= tol for p, q in zip(px, rgb))


def bands(flags):
    n, inside = 0, False
    for f in flags:
        if f and not inside:
            n += 1
        inside = f
    return n


w, h, rows = decode(sys.argv[1])
plot = range(240, min(980, w))
red = [any(near(r[x], (214, 39, 40)) for x in plot) for r in rows]
green = [any(near(r[x], (44, 160, 44)) for x in plot) for r in rows]
blue = [any(near(r[x], (121, 173, 210), 20) for x in plot) for r in rows]
print("lanes", bands(red))
print("writes", bands(green))
print("files", bands(blue))
print("inked", sum(1 for r in rows for px in r if px != (255, 255, 255)))
