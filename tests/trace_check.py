#!/usr/bin/env python3
"""trace_check.py: check a trace file written by mrengine (--trace, MR_trace_start).

usage: trace_check.py FILE [--engines N] [--created N --run N] [--sparks P,R,S] [--wakeups W]
                      [--marker TEXT]... [--cut 1]

FILE.eventlog: `ghc-events inc` reads it to the end (exit 0); `ghc-events validate threads` and
`validate sparks` say "Valid"; the file ends with the end marker 0xffff; the data is a chain of
blocks, each opened by a block marker whose size leads to the next, that ends exactly at the
end marker, each of an engine 0..N-1 (or 0xffff, threads that are not engines), and every
engine has one; the last spark-counter sample of each engine, summed, gives --created
and --run (MR_stats_get's sparks_pushed + sparks_injected and sparks_run_local + sparks_stolen +
sparks_injected). --sparks: it holds exactly P spark-create, R spark-run and S spark-steal
events (MR_stats_get's sparks_pushed, sparks_run_local + sparks_injected, sparks_stolen: each
counted spark event is traced, engine/events.hpp); --wakeups: at least W notification-received
events (the sum of the wakeups counted before MR_shutdown, whose own notifications come after).

FILE.json: Python's json module parses it; on every track, slices are well nested (never
partly overlapping); on each engine's track, the slices come in time order in the file and
its state slices follow each other without gap or overlap from its first to its stop, and
every engine stops at the same time.

Each --marker must appear in the trace. --cut 1: the process writing the trace was killed, so
each engine's part ends with its last block written, at a different time: an eventlog need
only be readable to its end by `ghc-events inc` (no end marker, no validation: a thread may
stop in a block that was never written), and a JSON file is read up to its last whole object
(its engines' tracks need not end together). Exit 0 if everything holds, 1 otherwise (the
reasons on stderr).
"""
import json
import re
import struct
import subprocess
import sys
from collections import defaultdict

FOREIGN_TID = 100000


def fail(msg):
    print("trace_check: " + msg, file=sys.stderr)
    sys.exit(1)


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def check_blocks(path, data, engines, cut):
    """The block chain, by the block markers' sizes (ghc-events does not check it)."""
    i = data.find(b"datb")
    if i < 0:
        fail("%s: no data section" % path)
    i += 4
    caps = set()
    while i + 2 <= len(data):
        (etype,) = struct.unpack(">H", data[i:i + 2])
        if etype == 0xFFFF:
            if i + 2 != len(data):
                fail("%s: %d bytes after the end marker" % (path, len(data) - i - 2))
            break
        if i + 24 > len(data):
            if cut:
                break
            fail("%s: a block marker cut at byte %d" % (path, i))
        etype, ts, size, end, cap = struct.unpack(">HQIQH", data[i:i + 24])
        if etype != 18 or size < 24 or end < ts:
            fail("%s: no block marker at byte %d (type %d, size %d)" % (path, i, etype, size))
        if cap != 0xFFFF and engines is not None and cap >= engines:
            fail("%s: a block of capability %d at byte %d" % (path, cap, i))
        caps.add(cap)
        i += size
    else:
        if not cut:
            fail("%s: the blocks run past the end of the file" % path)
    if engines is not None and not cut:
        missing = set(range(engines)) - caps
        if missing:
            fail("%s: no block of engine(s) %s" % (path, sorted(missing)))


# The events of a trace that are counted too (engine/events.hpp, MR_TRACED_EVENTS_MAP), as
# `ghc-events inc` shows them: spark create, spark run, spark steal, notification received.
NOTED = (("spark created", r"spark created$"),
         ("spark run", r"running a local spark$"),
         ("spark steal", r"stealing a spark from cap \d+$"),
         ("notification received", r"Unknown Event \(ref: 201\)$"))


def check_noted(path, noted, sparks, wakeups):
    for (what, _), want, n in zip(NOTED, sparks + [wakeups], noted):
        if want is not None and (n < want if what == "notification received" else n != want):
            fail("%s: %d %s events; MR_stats_get counted %d" % (path, n, what, want))


def check_eventlog(path, engines, created, ran, markers, cut, sparks, wakeups):
    with open(path, "rb") as f:
        data = f.read()
    if not cut and data[-2:] != b"\xff\xff":
        fail("%s does not end with the end marker 0xffff" % path)
    check_blocks(path, data, engines, cut)
    rc, out, err = run(["ghc-events", "inc", path])
    if rc != 0:
        fail("ghc-events inc %s: exit %d: %s" % (path, rc, err.strip()[-400:]))
    for what in () if cut else ("threads", "sparks"):
        rc, vout, verr = run(["ghc-events", "validate", what, path])
        if not vout.startswith("Valid"):
            fail("ghc-events validate %s %s: %s" % (what, path, (vout + verr)[:2000]))
    caps = set()
    last = {}
    noted = [0] * len(NOTED)
    for line in out.splitlines():
        m = re.match(r"\s*\d+: cap (\d+): (.*)", line)
        if not m:
            continue
        cap, text = int(m.group(1)), m.group(2)
        caps.add(cap)
        for k, (_, pattern) in enumerate(NOTED):
            if re.match(pattern, text):
                noted[k] += 1
        s = re.match(r"spark stats: (\d+) created, (\d+) converted, (\d+) remaining", text)
        if s:
            last[cap] = (int(s.group(1)), int(s.group(2)))
    if engines is not None:
        missing = set(range(engines)) - caps
        if missing:
            fail("%s: no events of engine(s) %s" % (path, sorted(missing)))
    if created is not None:
        c = sum(v[0] for v in last.values())
        r = sum(v[1] for v in last.values())
        if c != created or r != ran:
            fail("%s: spark counters say %d created, %d run; MR_stats_get says %d, %d"
                 % (path, c, r, created, ran))
    check_noted(path, noted, sparks, wakeups)
    for m in markers:
        if ("marker: " + m) not in out:
            fail("%s: marker %r not found" % (path, m))


def ns(t):
    return int(round(float(t) * 1000))


def check_json(path, engines, markers, cut):
    with open(path) as f:
        text = f.read()
    if cut:  # objects are separated by ",\n": keep the whole ones
        text = text[:text.rfind(",\n")] + "\n]"
    events = json.loads(text)
    if not isinstance(events, list):
        fail("%s: not a JSON array" % path)
    tracks = defaultdict(list)
    last_in_file = {}
    for i, e in enumerate(events):
        for key in ("ph", "name", "pid", "tid"):
            if key not in e:
                fail("%s: event %d has no %r: %r" % (path, i, key, e))
        if e["ph"] == "M":
            continue
        if "ts" not in e:
            fail("%s: event %d has no ts: %r" % (path, i, e))
        if e["ph"] == "X":
            t = (e["pid"], e["tid"])
            start, dur = ns(e["ts"]), ns(e["dur"])
            if dur < 0:
                fail("%s: negative duration: %r" % (path, e))
            if e["pid"] == 1:
                if t in last_in_file and start < last_in_file[t]:
                    fail("%s: engine track %r out of order at %r" % (path, t, e))
                last_in_file[t] = start
            tracks[t].append((start, start + dur, e))
    # Nesting, on every track.
    for t, slices in tracks.items():
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for b, end, e in slices:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack and end > stack[-1][1]:
                fail("%s: track %r: %r partly overlaps %r" % (path, t, e, stack[-1][2]))
            stack.append((b, end, e))
    # Engine states: contiguous from the first to the common stop.
    ends = set()
    for i in range(engines if engines is not None else 0):
        states = [s for s in tracks.get((1, i), []) if s[2].get("cat") == "state"]
        if not states:
            fail("%s: engine %d has no state slices" % (path, i))
        for (b0, e0, x0), (b1, e1, x1) in zip(states, states[1:]):
            if b1 != e0:
                fail("%s: engine %d: a %s in its states between %r and %r"
                     % (path, i, "gap" if b1 > e0 else "overlap", x0, x1))
        ends.add(states[-1][1])
    if len(ends) > 1 and not cut:
        fail("%s: the engines' tracks end at different times: %s" % (path, sorted(ends)))
    names = set(e["name"] for e in events)
    for m in markers:
        if m not in names:
            fail("%s: marker %r not found" % (path, m))


def main(argv):
    if len(argv) < 2:
        fail(__doc__.split("\n")[2])
    path = argv[1]
    engines = created = ran = wakeups = None
    sparks = [None] * 3
    markers = []
    cut = False
    i = 2
    while i < len(argv):
        flag, value = argv[i], argv[i + 1]
        if flag == "--engines":
            engines = int(value)
        elif flag == "--created":
            created = int(value)
        elif flag == "--run":
            ran = int(value)
        elif flag == "--sparks":
            sparks = [int(v) for v in value.split(",")]
        elif flag == "--wakeups":
            wakeups = int(value)
        elif flag == "--marker":
            markers.append(value)
        elif flag == "--cut":
            cut = value == "1"
        else:
            fail("unknown flag " + flag)
        i += 2
    if path.endswith(".eventlog"):
        check_eventlog(path, engines, created, ran, markers, cut, sparks, wakeups)
    elif path.endswith(".json"):
        check_json(path, engines, markers, cut)
    else:
        fail("%s: neither .eventlog nor .json" % path)


if __name__ == "__main__":
    main(sys.argv)
