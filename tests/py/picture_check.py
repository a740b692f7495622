#!/usr/bin/env python3
"""picture_check.py - test helper: a picture file is what its format says (PNG, SVG, PDF), and an SVG's text.

Usage:
  picture_check.py png FILE W H     the PNG signature, an IHDR of W x H, an IEND chunk last
  picture_check.py pdf FILE         starts with %PDF-, ends with %%EOF (a line end or two after it)
  picture_check.py svg FILE [TEXT]...  parses as XML (python3's xml module), its root an svg element,
                                    each TEXT in one of its text elements or its title
  picture_check.py texts FILE       prints the SVG's title and every text element's text, one a line
Exit status 0 when the file is what it should be, 1 (a line on stderr saying why) when not.
"""
import struct
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(why):
    sys.exit(f"picture_check: {why}")


def check_png(path, w, h):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: no PNG signature")
    length, tag = struct.unpack(">I4s", data[8:16])
    if tag != b"IHDR" or length != 13:
        fail(f"{path}: no IHDR chunk first")
    width, height = struct.unpack(">II", data[16:24])
    if (width, height) != (w, h):
        fail(f"{path}: {width}x{height}, not {w}x{h}")
    if data[-12:-4] != b"\x00\x00\x00\x00IEND":
        fail(f"{path}: does not end with an IEND chunk")


def check_pdf(path):
    data = open(path, "rb").read()
    if not data.startswith(b"%PDF-"):
        fail(f"{path}: does not start with %PDF-")
    if not data.rstrip(b"\r\n").endswith(b"%%EOF"):
        fail(f"{path}: does not end with %%EOF")


def svg_texts(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(f"{path}: not XML: {e}")
    if root.tag != SVG + "svg":
        fail(f"{path}: the root element is {root.tag}, not svg")
    texts = [t.text or "" for t in root.iter(SVG + "title")]
    texts += ["".join(t.itertext()) for t in root.iter(SVG + "text")]
    return texts


def main(argv):
    if len(argv) < 3:
        fail("usage: picture_check.py png|pdf|svg|texts FILE ...")
    kind, path = argv[1], argv[2]
    if kind == "png" and len(argv) == 5:
        check_png(path, int(argv[3]), int(argv[4]))
    elif kind == "pdf":
        check_pdf(path)
    elif kind == "svg":
        texts = svg_texts(path)
        for want in argv[3:]:
            if not any(want in t for t in texts):
                fail(f"{path}: no text holds '{want}' (its texts: {texts})")
    elif kind == "texts":
        print("\n".join(svg_texts(path)))
    else:
        fail(f"unknown check '{kind}'")


if __name__ == "__main__":
    main(sys.argv)
