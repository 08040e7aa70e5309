#!/usr/bin/env python3
"""plain_text.py FILE...: each FILE is UTF-8 and holds no control character (C0 but
newline and tab, DEL, C1): what a terminal can be sent safely. Names the first line of
each that is not, with its bad bytes shown as repr() shows them; exit status 1 then."""
import sys

bad = 0
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    for no, line in enumerate(data.split(b"\n"), 1):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            print(f"{path}:{no}: not UTF-8 ({e.reason} at byte {e.start}): {line!r}")
            bad = 1
            break
        ctl = [c for c in text if (c < " " and c != "\t") or "\x7f" <= c <= "\x9f"]
        if ctl:
            print(f"{path}:{no}: control characters {ctl!r}: {text!r}")
            bad = 1
            break
sys.exit(bad)
