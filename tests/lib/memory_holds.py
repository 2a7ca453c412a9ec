#!/usr/bin/env python3
"""memory_holds.py PID SECRET: how many copies of SECRET the memory of
process PID holds (read from the host through /proc/PID/mem; root).

Used to show that a sandbox's keeper, which keeps a copy of the memory
of the process that made it, holds no secret of the host's.  A sanitizer
build's runtime keeps its own copy of the initial environment (it reads
/proc/self/environ before libc starts) in an anonymous mapping: an
environment entry NAME=SECRET found in an anonymous mapping is not
counted when --sanitizer-env NAME is given."""
import re
import sys


def main() -> int:
    args = sys.argv[1:]
    env_name = None
    if len(args) == 4 and args[0] == "--sanitizer-env":
        env_name = args[1].encode()
        args = args[2:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    pid, key = args[0], args[1].encode()
    env_entry = env_name + b"=" + key + b"\0" if env_name else None
    overlap = len(env_entry or key) - 1
    hits = 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
            if not m:
                continue
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            # A sanitizer build reserves terabytes of shadow memory:
            # regions above 1 GiB are not the heap or the stack.
            if hi - lo > 1 << 30:
                continue
            anonymous = len(line.split()) < 6
            tail = b""
            for at in range(lo, hi, 1 << 20):
                try:
                    mem.seek(at)
                    chunk = tail + mem.read(min(1 << 20, hi - at))
                except (OSError, ValueError, OverflowError):
                    tail = b""
                    continue
                hits += chunk.count(key)
                if env_entry and anonymous:
                    hits -= chunk.count(env_entry)
                tail = chunk[-overlap:]
    print(hits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
