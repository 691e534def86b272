#!/usr/bin/env python3
"""Renders a simulator report.html in headless Chromium and checks what a person would see.

usage: check-report-html.py REPORT_HTML SCREENSHOT_PNG [--section ID ...]

Checks, each bounded by a 60 s timeout:
  - the screenshot (1200x2400) decodes and is not blank: many distinct colours, and more than
    a sliver of the page is not background;
  - Chromium logged no console message: no script error ("Uncaught"), no load or inline script
    blocked by the page's Content-Security-Policy (the page is self-contained, uses no network);
  - the DOM holds every section given with --section and no <script> element (text from the
    report, such as a scenario name, is escaped).
Exit status: 0 all held, 1 a check failed, 77 Chromium is not installed (a skip, not a pass).
Standard library only: the PNG is decoded with zlib.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

TIMEOUT_SECONDS = 60
WINDOW = (1200, 2400)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, profile, arguments):
    """Runs headless Chromium with a throwaway profile; returns (stdout, stderr)."""
    command = [
        chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
        "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
    ] + arguments
    try:
        done = subprocess.run(command, capture_output=True, timeout=TIMEOUT_SECONDS, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        raise SystemExit(f"chromium did not finish within {TIMEOUT_SECONDS} s: {' '.join(command)}")
    return done.stdout, done.stderr


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(path):
    """(width, height, channels, rows of bytes) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG file")
    offset, idat, header = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    if header is None:
        raise SystemExit(f"{path}: no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise SystemExit(f"{path}: unsupported PNG (bit depth {depth}, colour type {colour}, interlace {interlace})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous, position = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[position], bytearray(raw[position + 1:position + 1 + stride])
        position += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + paeth(left, up, corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def check_screenshot(path):
    width, height, channels, rows = decode_png(path)
    background = rows[0][:3]
    colours, painted, total = set(), 0, 0
    for row in rows[::4]:
        for x in range(0, width * channels, channels * 4):
            pixel = row[x:x + 3]
            colours.add(pixel)
            painted += pixel != background
            total += 1
    share = painted / max(total, 1)
    problems = []
    if len(colours) < 16:
        problems.append(f"only {len(colours)} distinct colours")
    if share < 0.02:
        problems.append(f"only {share:.1%} of the page differs from the background")
    return f"{width}x{height}, {len(colours)} distinct colours, {share:.1%} painted", problems


def main(arguments):
    if len(arguments) < 2:
        print(__doc__, file=sys.stderr)
        return 64
    html, screenshot = os.path.abspath(arguments[0]), os.path.abspath(arguments[1])
    sections = [arguments[i + 1] for i, value in enumerate(arguments[:-1]) if value == "--section"]
    if not os.path.isfile(html):
        print(f"check-report-html: no file {html}", file=sys.stderr)
        return 64
    chromium = find_chromium()
    if chromium is None:
        print("check-report-html: chromium is not installed (make setup installs it)", file=sys.stderr)
        return 77
    url = "file://" + html
    problems = []
    with tempfile.TemporaryDirectory(prefix="report-check-") as profile:
        _, log = run_chromium(
            chromium, profile, [f"--screenshot={screenshot}", f"--window-size={WINDOW[0]},{WINDOW[1]}", url])
        dom, dom_log = run_chromium(chromium, profile, ["--dump-dom", url])
    for line in (log + dom_log).splitlines():
        # A clean page writes nothing to the console: any message (an uncaught error, a load or an
        # inline script the Content-Security-Policy blocked) is a failure.
        if ":CONSOLE" in line or "Uncaught" in line or "Refused to" in line:
            problems.append("chromium logged: " + line.strip())
    if not os.path.isfile(screenshot):
        problems.append("chromium wrote no screenshot; its log:\n" + log[-2000:])
        summary = "no screenshot"
    else:
        summary, screenshot_problems = check_screenshot(screenshot)
        problems += screenshot_problems
    for section in sections:
        if f'id="{section}"' not in dom:
            problems.append(f"the page has no section id=\"{section}\"")
    if "<script" in dom.lower():
        problems.append("the page holds a <script> element")
    if problems:
        print(f"check-report-html: {html}: " + "; ".join(problems), file=sys.stderr)
        return 1
    print(f"check-report-html: {html}: {summary}; {len(sections)} sections; no script errors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
