#!/usr/bin/env python3
"""Checks what a consumer decoded from the C test programs.

  check_output.py record-all FILE        usertrace record json of emit_all
  check_output.py perf-all FILE          perf script text of emit_all
  check_output.py record-threads FILE T N  every (thread, seq) exactly once
  check_output.py record-example FILE    examples/c and examples/cpp events
  check_output.py record-spans FILE C_IDS CPP_IDS  tests/c/spans.c and tests/cpp/spans.cpp, event by event
  check_output.py record-two-files FILE C_IDS CXX_IDS  tests/c/two_files_{a,b}.c, as C and with b as C++
  check_output.py record-dlclose FILE EVENT PIDFILE  tests/c/dlclose_shm_main.c's one event
"""
import json
import re
import struct
import sys


def fail(msg):
    print(f"check_output: {msg}", file=sys.stderr)
    sys.exit(1)


def records(path):
    """The event lines of a `record --format json` output. Other types of
    line (process starts, exits) are skipped, as cli/src/json.rs asks of
    readers: parse by name, ignore what you do not know."""
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith("{"):
            obj = json.loads(line)
            if obj.get("type", "event") == "event":
                out.append(obj)
    return out


def expected_all(seq):
    s = seq % 1000
    return {
        "seq": seq, "u8v": 200, "u16v": 65000, "u64v": 2**64 - 1 - s, "i8v": -100, "i16v": -30000,
        "i32v": -2000000000, "i64v": -9000000000000000000 - s, "flag": s % 2 == 1, "f32v": 1.5,
        "f64v": -2.25 * s, "msg": "h\u00e9llo from C", "raw": "deadbeef",
    }


def record_all(path):
    evs = records(path)
    alls = [e for e in evs if e["event"].endswith("ctest_all")]
    dyns = [e for e in evs if e["event"].endswith("ctest_dyn")]
    seqs = sorted(e["fields"]["seq"] for e in alls)
    if seqs != [1, 2, 3, 1001, 1002, 1003]:
        fail(f"ctest_all seqs {seqs}, expected [1, 2, 3, 1001, 1002, 1003]\n{open(path).read()}")
    for e in alls:
        f = e["fields"]
        want = expected_all(f["seq"])
        for k, v in want.items():
            if f.get(k) != v:
                fail(f"field {k} = {f.get(k)!r}, expected {v!r} in {e}")
        if not str(f.get("tag", "")).rstrip("\x00") == "tag":
            fail(f"tag = {f.get('tag')!r}")
        if e.get("error"):
            fail(f"decode error {e}")
    got = sorted((e["fields"]["seq"], e["fields"]["name"]) for e in dyns)
    if got != [(1, "dynamic"), (2, "dynamic"), (3, "dynamic")]:
        fail(f"ctest_dyn events {got}")
    print(f"check_output: {len(alls)} ctest_all and {len(dyns)} ctest_dyn events with exact values")


def perf_all(path):
    lines = [l for l in open(path, encoding="utf-8", errors="replace") if "ctest_all:" in l]
    good = 0
    for line in lines:
        m = re.search(r"\bseq=(\d+)", line)
        if not m:
            fail(f"no seq in {line!r}")
        seq = int(m[1])
        s = seq % 1000
        f32bits = struct.unpack("<I", struct.pack("<f", 1.5))[0]
        f64bits = struct.unpack("<Q", struct.pack("<d", -2.25 * s))[0]
        # perf 6.1 prints s8/s16 fields unsigned (the bits), f32/f64 as their
        # IEEE-754 bits, and a __rel_loc u8[] as its loc word, so raw is not checked.
        want = [f"u8v=200", "u16v=65000", f"u64v={2**64 - 1 - s}", "i8v=156", "i16v=35536", "i32v=-2000000000",
                f"i64v={-9000000000000000000 - s}", f"flag={1 if s % 2 else 0}", f"f32v={f32bits}", f"f64v={f64bits}",
                "msg=h\u00e9llo from C"]
        for w in want:
            if not re.search(r"(^|\s)" + re.escape(w) + r"(\s|$)", line):
                fail(f"{w} not in {line!r}")
        good += 1
    if good < 5:
        fail(f"perf script showed {good} ctest_all events, expected at least 5:\n{open(path).read()[-3000:]}")
    dyn = [l for l in open(path, encoding="utf-8", errors="replace") if "ctest_dyn:" in l]
    if len(dyn) < 5 or any(not re.search(r"seq=\d+ name=dynamic$", l.rstrip()) for l in dyn):
        fail(f"ctest_dyn lines: {dyn[:5]}")
    print(f"check_output: perf script decoded {good} ctest_all and {len(dyn)} ctest_dyn events with exact values")


def record_threads(path, threads, per_thread):
    seen = {}
    for e in records(path):
        if e["event"].endswith("ctest_mt"):
            key = (e["fields"]["thread"], e["fields"]["seq"])
            seen[key] = seen.get(key, 0) + 1
    want = {(t, s) for t in range(threads) for s in range(per_thread)}
    missing = want - set(seen)
    dup = [k for k, n in seen.items() if n > 1]
    extra = set(seen) - want
    if missing or dup or extra:
        fail(f"{len(seen)} distinct events; missing {len(missing)} (e.g. {sorted(missing)[:5]}), "
             f"duplicated {len(dup)}, unexpected {len(extra)}")
    print(f"check_output: all {len(want)} events from {threads} threads arrived exactly once")


def record_example(path):
    evs = records(path)
    req = [(e["fields"]["id"], e["fields"]["path"], e["fields"]["ms"]) for e in evs if e["event"].endswith("example_c_request")]
    if sorted(req) != [(1, "/index.html", 1.5), (2, "/index.html", 3.0), (3, "/index.html", 4.5)]:
        fail(f"example_c_request {req}")
    if sum(e["event"].endswith("example_c_shutdown") for e in evs) != 1:
        fail("no example_c_shutdown")
    greet = sorted((e["fields"]["n"], e["fields"]["who"], e["fields"]["loud"]) for e in evs if e["event"].endswith("example_cpp_greeting"))
    if greet != [(-1, "world", False), (0, "world", False), (1, "world", True)]:
        fail(f"example_cpp_greeting {greet}")
    print("check_output: the C and C++ examples' events arrived")


# What a span begun by id without a parent (the macros, the dynamic
# handles) writes after its id: nothing said of its trace.
NO_TRACE = {"trace_id_hi": 0, "trace_id_lo": 0, "parent_span_id": 0}


def span_ids(path):
    """The ids a span test wrote, in begin order; a word (a scoped span, whose
    id the program cannot see) stands for the id its begin event carries."""
    return [int(w) if w.isdigit() else w for w in open(path, encoding="utf-8").read().split("\n") if w]


def expect_sequence(evs, process, expected, ids):
    """Holds the events of `process` to `expected`, one by one: (thread, event,
    fields), where a field value "A".."Z" is the id of that letter (the
    letters in order of `ids`; a letter met first in a begin whose id is a
    word in `ids` takes the begin's id). Returns the tid of each thread name."""
    got = [e for e in evs if e["process"] == process]
    if len(got) != len(expected):
        fail(f"{process}: {len(got)} events, expected {len(expected)}:\n" +
             "\n".join(f"{e['comm']} {e['event']} {e['fields']}" for e in got))
    letters = {}
    order = iter(ids)
    tids = {}
    for i, (e, (thread, event, fields)) in enumerate(zip(got, expected)):
        where = f"{process} event {i}: {e['comm']} {e['event']} {e['fields']}, expected {thread} {event} {fields}"
        if e["event"] != event or list(e["fields"]) != list(fields):
            fail(where)
        if e["comm"] != thread or e["pid"] != got[0]["pid"]:
            fail(f"{where}: comm or pid (pid {e['pid']}, first {got[0]['pid']})")
        if tids.setdefault(thread, e["tid"]) != e["tid"]:
            fail(f"{where}: thread {thread} was tid {tids[thread]}, here tid {e['tid']}")
        for name, want in fields.items():
            value = e["fields"][name]
            if isinstance(want, str) and len(want) == 1 and want.isupper():
                if want not in letters:
                    if name != "span_begin":
                        fail(f"{where}: span {want} ends before it begins")
                    written = next(order, None)
                    letters[want] = value if isinstance(written, str) else written
                want = letters[want]
            if value != want or type(value) is not type(want):
                fail(f"{where}: {name} = {value!r}, expected {want!r}")
    if len(set(letters.values())) != len(letters) or 0 in letters.values():
        fail(f"{process}: span ids not distinct and nonzero: {letters}")
    if next(order, None) is not None:
        fail(f"{process}: more ids written than spans recorded: {ids}")
    return tids


def record_spans(path, c_ids, cpp_ids):
    evs = [e for e in records(path) if not e.get("error")]
    if any(e.get("error") for e in records(path)):
        fail(f"decode errors in {path}")
    main, worker = "spans", "cspan_worker"
    end = "cspan_span_end"
    tids = expect_sequence(evs, "spans", [
        (main, "cspan_request", {"span_begin": "A", **NO_TRACE, "big": 2**63 + 5, "delta": -42, "path": "/h\u00e9llo/w\u00f6rld"}),
        (main, "cspan_step", {"span_begin": "B", **NO_TRACE}),
        (main, end, {"span_end": "B"}),
        (main, "cspan_step", {"span_begin": "C", **NO_TRACE}),
        (main, end, {"span_end": "C"}),
        (main, end, {"span_end": "A"}),
        (main, "cspan_handoff", {"span_begin": "D", **NO_TRACE, "job": 7}),
        (worker, end, {"span_end": "D"}),
        (worker, "cspan_handoff", {"span_begin": "E", **NO_TRACE, "job": 8}),
        (main, end, {"span_end": "E"}),
        (main, "cspan_scoped", {"span_begin": "F", **NO_TRACE, "n": 1}),
        (main, "cspan_mark", {"n": 1}),
        (main, end, {"span_end": "F"}),
        (main, "cspan_mark", {"n": 2}),
        (main, "cspan_scoped", {"span_begin": "G", **NO_TRACE, "n": 2}),
        (main, end, {"span_end": "G"}),
        (main, "cspan_mark", {"n": 3}),
        (main, "cspan_dyn", {"span_begin": "H", **NO_TRACE, "n": 9}),
        (main, end, {"span_end": "H"}),
        (main, "cspan_mark", {"n": 4}),
    ], span_ids(c_ids))
    if tids[main] == tids[worker]:
        fail(f"the handoff spans ended on the thread that began them (tid {tids[main]})")
    end = "cxxspan_span_end"
    expect_sequence(evs, "spans_cpp", [
        ("spans_cpp", "cxxspan_work", {"span_begin": "A", **NO_TRACE, "what": "outer", "n": -1}),
        ("spans_cpp", "cxxspan_work", {"span_begin": "B", **NO_TRACE, "what": "inner", "n": -2}),
        ("spans_cpp", end, {"span_end": "B"}),
        ("spans_cpp", "cxxspan_work", {"span_begin": "C", **NO_TRACE, "what": "moved", "n": 5}),
        ("spans_cpp", "cxxspan_mark", {"n": 1}),
        ("spans_cpp", end, {"span_end": "C"}),
        ("spans_cpp", "cxxspan_work", {"span_begin": "D", **NO_TRACE, "what": "throws", "n": -3}),
        ("spans_cpp", end, {"span_end": "D"}),
        ("spans_cpp", "cxxspan_mark", {"n": 2}),
        ("spans_cpp", "cxxspan_work", {"span_begin": "E", **NO_TRACE, "what": "scoped", "n": 6}),
        ("spans_cpp", "cxxspan_mark", {"n": 3}),
        ("spans_cpp", end, {"span_end": "E"}),
        ("spans_cpp", end, {"span_end": "A"}),
    ], span_ids(cpp_ids))
    others = {e["process"] for e in evs} - {"spans", "spans_cpp"}
    if others:
        fail(f"events from other processes: {others}")
    print(f"check_output: {len(evs)} span events from C and C++ in the exact order, ids and values")


def record_trace_context(path, ids_path):
    """tests/c/trace_context_spans.c's begins, in order, carry the trace
    context it wrote down: their ids, trace id halves and parent ids; the
    traceparent each span handed on spells its own ids; the first two are
    in the remote parent's trace, the next two in one new trace."""
    begins = [e["fields"] for e in records(path) if "span_begin" in e["fields"]]
    lines = [l.split() for l in open(ids_path, encoding="utf-8").read().splitlines() if l]
    expected = [[int(w) for w in l] for l in lines if l[0] != "traceparent"]
    handed = {int(l[1]): l[2] for l in lines if l[0] == "traceparent"}
    names = ["span_begin", "trace_id_hi", "trace_id_lo", "parent_span_id"]
    got = [[f[n] for n in names] for f in begins]
    if got != expected:
        fail(f"begins {got}, expected {expected}")
    if [list(f)[:4] for f in begins] != [names] * len(begins):
        fail(f"the trace context does not follow the id: {[list(f) for f in begins]}")
    remote = (0x4bf92f3577b34da6, 0xa3ce929d0e0e4736)
    if [tuple(g[1:3]) for g in got[:2]] != [remote, remote] or got[0][3] != 0x00f067aa0ba902b7:
        fail(f"the first two spans are not in the remote parent's trace: {got[:2]}")
    if got[2][1:3] != got[3][1:3] or tuple(got[2][1:3]) == remote or got[2][3] != 0:
        fail(f"the root and the dynamic span under it are not one new trace: {got[2:4]}")
    for span_id, hi, lo, _ in got[:4]:
        want = f"00-{hi:016x}{lo:016x}-{span_id:016x}-01"
        if handed.get(span_id) != want:
            fail(f"span {span_id} handed on {handed.get(span_id)}, expected {want}")
    print(f"check_output: {len(got)} span begins carry the trace context the program wrote down")


def record_two_files(path, c_ids, cxx_ids):
    """two_files, then two_files_cxx (two_files_b.c built as C++): each
    file's events, on the objects the other file defines, in order."""
    evs = records(path)
    if any(e.get("error") for e in evs):
        fail(f"decode errors in {path}")
    for process, b, ids in [("two_files", "two_files_b.c", c_ids), ("two_files_cxx", "two_files_b.c as C++", cxx_ids)]:
        expect_sequence(evs, process, [
            (process, "ctwo_hit", {"n": 1, "file": "two_files_a.c"}),
            (process, "ctwo_hit", {"n": 2, "file": b}),
            (process, "ctwo_note", {"v": -5, "file": "two_files_a.c"}),
            (process, "ctwo_job", {"span_begin": "A", **NO_TRACE, "n": 3}),
            (process, "ctwo_span_end", {"span_end": "A"}),
        ], span_ids(ids))
    others = {e["process"] for e in evs} - {"two_files", "two_files_cxx"}
    if others:
        fail(f"events from other processes: {others}")
    print(f"check_output: {len(evs)} events of two files, as C and with C++, in order with their exact values")


def record_dlclose(path, event, pid_path):
    """tests/c/dlclose_shm_main.c, whose recorder recorded only EVENT: the
    one event it emitted before dlclose, with its value (the program's
    VALUE), from the pid it wrote, and no loss."""
    pid = int(open(pid_path, encoding="utf-8").read())
    lines = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
    evs = [o for o in lines if o.get("type") == "event"]
    lost = [o for o in lines if o.get("type") == "lost"]
    if lost:
        fail(f"losses in {path}: {lost}")
    if len(evs) != 1:
        fail(f"{len(evs)} events, expected 1:\n" + "\n".join(f"{e['pid']} {e['event']} {e['fields']}" for e in evs))
    e = evs[0]
    want = (event, {"n": 0xC0DE5EED}, pid, pid)
    got = (e["event"], e["fields"], e["pid"], e["tid"])
    if got != want or e.get("error"):
        fail(f"(event, fields, pid, tid) = {got}, expected {want}: {e}")
    print(f"check_output: the one {event} event, n = {e['fields']['n']:#x}, from pid {pid}")


def perf_frames(path):
    """`perf script` of tests/c/frames.c under --call-graph fp: every
    sample's user stack, innermost first, goes from libc's writev through
    the library's emit to inner, middle, outer and main, in that order."""
    samples = []
    for block in open(path).read().split("\n\n"):
        lines = block.strip().splitlines()
        if not lines or "ctest_frame_hit" not in lines[0]:
            continue
        # "  ADDRESS SYMBOL+OFFSET (DSO)": the symbol, and the DSO's name.
        frames = []
        for line in lines[1:]:
            parts = line.split(None, 1)
            if len(parts) == 2 and "(" in parts[1]:
                symbol, dso = parts[1].rsplit(" (", 1)
                frames.append((symbol.split("+")[0], dso.rstrip(")").rsplit("/", 1)[-1]))
        samples.append(frames)
    if not samples:
        fail("no ctest_frame_hit sample")
    want = ["inner", "middle", "outer", "main"]
    for frames in samples:
        user = [f for f in frames if not f[1].startswith("[kernel")]
        names = [f[0] for f in user]
        emit = next((i for i, f in enumerate(user) if f[1].startswith("libusertrace")), None)
        if emit is None or names[emit + 1:emit + 5] != want:
            fail(f"a sample's user stack is {user}: expected the library's emit, then {want}")
    print(f"check_output: {len(samples)} samples, each walked from writev through the library to {' < '.join(want)}")



FRAMES = ["inner", "middle", "outer", "main"]


def frames_in_order(names):
    """Where inner, middle, outer and main follow one another in names."""
    return next((i for i in range(len(names)) if names[i:i + len(FRAMES)] == FRAMES), None)


def record_frames(path, count):
    """`usertrace record --call-graph fp` (or `convert` of its perf.data) of
    tests/c/frames.c: every ctest_frame_hit event has its user stack,
    innermost first, from libc's writev through the library's emit to
    inner, middle, outer and main, each of the program's four named with
    frames.c and a line, in the program's own file."""
    events = [e for e in records(path) if e["event"] == "ctest_frame_hit"]
    if len(events) != count:
        fail(f"{len(events)} ctest_frame_hit events, expected {count}")
    for e in events:
        stack = e.get("stack")
        if not stack:
            fail(f"an event without its stack: {e}")
        names = [f.get("function") for f in stack]
        at = frames_in_order(names)
        if at is None:
            fail(f"a stack is {names}: expected {' < '.join(FRAMES)} in it")
        modules = [f.get("module", "").rsplit("/", 1)[-1] for f in stack]
        if not any(m.startswith("libusertrace") for m in modules[:at]):
            fail(f"a stack has no frame of the library before inner: {list(zip(names, modules))}")
        for f in stack[at:at + len(FRAMES)]:
            if f.get("module", "").rsplit("/", 1)[-1] != "frames" or f.get("file", "").rsplit("/", 1)[-1] != "frames.c" or not f.get("line"):
                fail(f"frame {f} is not named in frames.c with a line")
    print(f"check_output: {len(events)} events, each with its stack from the library's emit to {' < '.join(FRAMES)}")


def pftrace_frames(path, count):
    """check_pftrace.py's summary of the .pftrace that `convert` makes of
    that recording: each ctest_frame_hit instant has its callstack,
    outermost first: main, outer, middle, inner, then the library."""
    summary = json.load(open(path))
    instants = [i for i in summary["instants"] if i["name"] == "ctest_frame_hit"]
    if len(instants) != count:
        fail(f"{len(instants)} ctest_frame_hit instants in the trace, expected {count}")
    for i in instants:
        names = [f["function"] for f in reversed(i.get("callstack", []))]
        if frames_in_order(names) is None:
            fail(f"an instant's callstack (innermost first) is {names}: expected {' < '.join(FRAMES)} in it")
    print(f"check_output: {len(instants)} Perfetto instants, each with its callstack from main to inner")


if __name__ == "__main__":
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "record-all":
        record_all(path)
    elif cmd == "perf-all":
        perf_all(path)
    elif cmd == "perf-frames":
        perf_frames(path)
    elif cmd == "record-frames":
        record_frames(path, int(sys.argv[3]))
    elif cmd == "pftrace-frames":
        pftrace_frames(path, int(sys.argv[3]))
    elif cmd == "record-threads":
        record_threads(path, int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "record-example":
        record_example(path)
    elif cmd == "record-spans":
        record_spans(path, sys.argv[3], sys.argv[4])
    elif cmd == "record-trace-context":
        record_trace_context(path, sys.argv[3])
    elif cmd == "record-two-files":
        record_two_files(path, sys.argv[3], sys.argv[4])
    elif cmd == "record-dlclose":
        record_dlclose(path, sys.argv[3], sys.argv[4])
    else:
        fail(f"unknown command {cmd}")
