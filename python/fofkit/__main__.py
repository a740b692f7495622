"""python3 -m fofkit [STREAM] - lists the chunks of a stream (a file, or stdin) as fofdump(1) does, after checking every payload."""

import sys

from .stream import FLAG_PARTICLE, FLAG_TEXT, FLAG_ZLIB, StreamError, open


def main(argv):
    if len(argv) > 1 or (argv and argv[0] in ("-h", "--help")):
        print(__doc__.strip(), file=sys.stderr if len(argv) > 1 else sys.stdout)
        return 2 if len(argv) > 1 else 0
    source = argv[0] if argv else "-"
    try:
        with open(source) as s:
            s.verify()
            print("%-8s %-5s %5s %12s %6s %14s %s" % ("tag", "type", "level", "rows", "cols", "stored", "flags"))
            for c in s.chunks:
                flags = ("particle " if c.flags & FLAG_PARTICLE else "") + ("text " if c.flags & FLAG_TEXT else "") + (
                    "zlib" if c.flags & FLAG_ZLIB else "")
                print("%-8s %-5s %5d %12d %6d %14d %s" % (c.tag, c.dtype, c.level, c.rows, c.columns, c.stored, flags))
    except (StreamError, OSError) as e:
        print("fofkit: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
