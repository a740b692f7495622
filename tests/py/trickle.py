#!/usr/bin/env python3
"""trickle.py - a slow pipe: copies stdin to stdout BLOCK bytes at a time, PAUSE seconds apart.

Usage: trickle.py [BLOCK [PAUSE]] (default 65536 bytes, 0.01 s): a stage before a reader
that is slower than the reader, so that the reader meets its input's chunks as they come.
"""
import os
import sys
import time


def main(argv):
    block = int(argv[1]) if len(argv) > 1 else 65536
    pause = float(argv[2]) if len(argv) > 2 else 0.01
    while True:
        data = os.read(0, block)
        if not data:
            return 0
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
        time.sleep(pause)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
