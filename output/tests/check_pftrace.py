#!/usr/bin/env python3
"""Checks a Perfetto trace (.pftrace) with Perfetto's own message
definitions (PyPI `perfetto`), independently of the Rust writer, and prints
a normalized JSON summary of it.

    python3 check_pftrace.py TRACE.pftrace

Needs `pip install perfetto protobuf`. Checks that:
- the file parses as perfetto.protos.Trace;
- every track_uuid a track event uses is described by a TrackDescriptor;
- on each packet sequence the first packet clears the incremental state,
  every packet that refers to interned names says it needs that state and
  comes after the clear, and every iid it uses was interned before;
- every track event has a timestamp on CLOCK_MONOTONIC (clock id 3, given
  on the packet or by the sequence's TracePacketDefaults), in time order;
- every TYPE_SLICE_BEGIN has its TYPE_SLICE_END on the same track, and no
  END comes without a BEGIN;
- every ftrace bundle names its CPU (under 1024, or Perfetto refuses the
  trace), and holds only sched_switch, sched_waking and sched_migrate_task
  events, each with a timestamp and the pid (tid) it ran in, in time order
  per CPU; their clock is the bundle's default, CLOCK_BOOTTIME, and a
  clock snapshot must tie it to CLOCK_MONOTONIC, the track events' clock.

From the ftrace events it rebuilds every thread's states as Perfetto's
trace processor does (with its reading of prev_state when the trace names
no kernel version, Linux 4.4's layout): a switch-in makes the thread
Running; a switch-out puts it in the state prev_state says (R, R+, S, D,
...); a waking of a thread that is not running makes it R, woken by the
task the event ran in. The idle task (tid 0) is left out.

On success prints one JSON object on stdout and exits 0:

    {
      "packets": 42,
      "processes": [{"pid": 10, "name": "server", "cmdline": ["server", "-v"]}],
      "threads": [{"pid": 10, "tid": 11, "name": "worker"}],
      "slices": [{"track": "thread:11", "depth": 0, "name": "request",
                  "ts": 1000, "dur": 500, "args": {"path": {"string": "/"}}}],
      "instants": [{"track": "thread:11", "depth": 1, "name": "note",
                    "ts": 1200, "args": {"n": {"uint": 3}},
                    "callstack": [{"function": "main", "file": "app.c",
                                   "line": 9}, ...]}],
      "lost": [{"ts": 2000, "name": "lost 12 events on cpu 3"}],
      "ftrace": [{"cpu": 0, "ts": 1100, "pid": 11, "event": "sched_switch",
                  "fields": {"prev_pid": 11, "prev_state": 1, ...}}],
      "thread_states": [{"tid": 11, "ts": 1100, "dur": 300, "state": "S",
                         "name": "Sleeping", "waker_tid": null}],
      "slice_states": [{"track": "thread:11", "name": "request", "ts": 1000,
                        "dur": 500, "states": {"Sleeping": 300, ...}}]
    }

processes are sorted by pid, threads by tid, slices and instants by
(track, ts, depth), ftrace events by (cpu, ts), thread states by (tid,
ts). A thread state's dur is null while it lasts to the end of the
trace; its name is the one ui.perfetto.dev shows ("Running", "Runnable",
"Runnable (Preempted)", "Sleeping", "Uninterruptible Sleep", ...), and
waker_tid the tid of the task whose waking made it runnable. slice_states
gives, for each slice on a thread's track, the nanoseconds of it its
thread spent in each state (time before the thread's first state is in
none). A track is named "thread:TID" (a thread's track),
"process:PID" (a process's own track), "async:PID:NAME" (a track whose
parent is process PID's track, e.g. "async:10:spans") or "global:NAME".
Times are the trace's nanoseconds. Each arg is {TYPE: value} with TYPE one
of uint, int, double, bool, string (a non-finite double's value is the
string "NaN", "inf" or "-inf"). Lost markers are the instants of the track
"usertrace: lost events", listed under "lost" only.

On a violation prints `check_pftrace: FILE: ...` lines on stderr and exits
1; exits 2 when the file cannot be read or `perfetto` is not installed.
"""

import json
import math
import sys

LOST_TRACK = "usertrace: lost events"
CLOCK_MONOTONIC = 3
CLOCK_BOOTTIME = 6
MAX_CPUS = 1024
SCHED_EVENTS = ("sched_switch", "sched_waking", "sched_migrate_task")
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2


def main(argv):
    if len(argv) != 2:
        print("usage: check_pftrace.py TRACE.pftrace", file=sys.stderr)
        return 2
    path = argv[1]
    try:
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent
    except ImportError as e:
        print(f"check_pftrace: cannot import Perfetto's protos ({e}); pip install perfetto protobuf", file=sys.stderr)
        return 2
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print(f"check_pftrace: {path}: {e}", file=sys.stderr)
        return 2
    trace = Trace()
    try:
        trace.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError, or worse
        print(f"check_pftrace: {path}: not a Perfetto trace: {e}", file=sys.stderr)
        return 1
    summary, violations = check(trace, TrackEvent)
    if violations:
        for v in violations[:20]:
            print(f"check_pftrace: {path}: {v}", file=sys.stderr)
        if len(violations) > 20:
            print(f"check_pftrace: {path}: ... and {len(violations) - 20} more", file=sys.stderr)
        return 1
    json.dump(summary, sys.stdout, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")
    return 0


def arg_value(annotation):
    kind = annotation.WhichOneof("value")
    if kind == "uint_value":
        return {"uint": annotation.uint_value}
    if kind == "int_value":
        return {"int": annotation.int_value}
    if kind == "double_value":
        v = annotation.double_value
        if math.isnan(v):
            return {"double": "NaN"}
        if math.isinf(v):
            return {"double": "inf" if v > 0 else "-inf"}
        return {"double": v}
    if kind == "bool_value":
        return {"bool": annotation.bool_value}
    if kind == "string_value":
        return {"string": annotation.string_value}
    # Nested args: an array's elements have no name; a dict's entries
    # each carry their own (not interned).
    if len(annotation.array_values) > 0:
        return {"array": [arg_value(a) for a in annotation.array_values]}
    if len(annotation.dict_entries) > 0:
        return {"dict": {a.name: arg_value(a) for a in annotation.dict_entries}}
    return {str(kind): None}


def check(trace, TrackEvent):
    violations = []
    descriptors = {}
    # Track descriptors may come anywhere: collect them first.
    for i, packet in enumerate(trace.packet):
        if packet.HasField("track_descriptor"):
            d = packet.track_descriptor
            if d.uuid in descriptors:
                violations.append(f"packet {i}: track {d.uuid} described twice")
            descriptors[d.uuid] = d

    processes = {}
    threads = {}
    for d in descriptors.values():
        if d.HasField("process"):
            p = d.process
            processes[p.pid] = {"pid": p.pid, "name": p.process_name, "cmdline": list(p.cmdline)}
        if d.HasField("thread"):
            t = d.thread
            threads[t.tid] = {"pid": t.pid, "tid": t.tid, "name": t.thread_name}

    def track_ref(uuid):
        d = descriptors[uuid]
        if d.HasField("thread"):
            return f"thread:{d.thread.tid}"
        if d.HasField("process"):
            return f"process:{d.process.pid}"
        if d.HasField("parent_uuid") and d.parent_uuid in descriptors and descriptors[d.parent_uuid].HasField("process"):
            return f"async:{descriptors[d.parent_uuid].process.pid}:{d.name}"
        return f"global:{d.name}"

    snapshot = {}
    for packet in trace.packet:
        if packet.HasField("clock_snapshot"):
            for c in packet.clock_snapshot.clocks:
                snapshot.setdefault(c.clock_id, c.timestamp)
    ftrace, ftrace_violations = ftrace_events(trace, snapshot)
    violations += ftrace_violations

    sequences = {}  # id -> {"cleared", "names", "annotation_names", "clock"}
    open_slices = {}
    last_ts = {}
    slices, instants, lost = [], [], []
    for i, packet in enumerate(trace.packet):
        seq_id = packet.trusted_packet_sequence_id
        flags = packet.sequence_flags
        seq = sequences.get(seq_id)
        if seq is None:
            seq = sequences[seq_id] = {"cleared": False, "names": {}, "annotation_names": {}, "clock": None, "first": i}
            if not flags & SEQ_INCREMENTAL_STATE_CLEARED:
                violations.append(f"packet {i}: the first packet of sequence {seq_id} does not clear the incremental state")
        if flags & SEQ_INCREMENTAL_STATE_CLEARED or packet.incremental_state_cleared:
            seq.update(cleared=True, names={}, annotation_names={}, clock=None)
        if packet.HasField("trace_packet_defaults") and packet.trace_packet_defaults.HasField("timestamp_clock_id"):
            seq["clock"] = packet.trace_packet_defaults.timestamp_clock_id
        if packet.HasField("interned_data"):
            for n in packet.interned_data.event_names:
                seq["names"][n.iid] = n.name
            for n in packet.interned_data.debug_annotation_names:
                seq["annotation_names"][n.iid] = n.name
        if not packet.HasField("track_event"):
            if packet.HasField("ftrace_events") and packet.sequence_flags & SEQ_NEEDS_INCREMENTAL_STATE:
                violations.append(f"packet {i}: an ftrace bundle says it needs incremental state, which it does not")
            continue
        event = packet.track_event
        uses_interning = event.HasField("name_iid") or any(a.HasField("name_iid") for a in event.debug_annotations)
        if uses_interning:
            if not flags & SEQ_NEEDS_INCREMENTAL_STATE:
                violations.append(f"packet {i}: refers to interned names without SEQ_NEEDS_INCREMENTAL_STATE")
            if not seq["cleared"]:
                violations.append(f"packet {i}: refers to interned names before its sequence cleared its state")
        if not packet.HasField("timestamp"):
            violations.append(f"packet {i}: a track event without a timestamp")
            continue
        clock = packet.timestamp_clock_id if packet.HasField("timestamp_clock_id") else seq["clock"]
        if clock != CLOCK_MONOTONIC:
            violations.append(f"packet {i}: timestamp on clock {clock}, not CLOCK_MONOTONIC (3)")
        ts = packet.timestamp
        if ts < last_ts.get(seq_id, 0):
            violations.append(f"packet {i}: time goes back on sequence {seq_id} ({ts} after {last_ts[seq_id]})")
        last_ts[seq_id] = max(ts, last_ts.get(seq_id, 0))
        uuid = event.track_uuid
        if uuid not in descriptors:
            violations.append(f"packet {i}: track_uuid {uuid} is not described by any TrackDescriptor")
            continue
        if event.HasField("name_iid"):
            name = seq["names"].get(event.name_iid)
            if name is None:
                violations.append(f"packet {i}: event name iid {event.name_iid} was not interned before")
                name = ""
        else:
            name = event.name
        args = {}
        for a in event.debug_annotations:
            if a.HasField("name_iid"):
                key = seq["annotation_names"].get(a.name_iid)
                if key is None:
                    violations.append(f"packet {i}: annotation name iid {a.name_iid} was not interned before")
                    key = f"<iid {a.name_iid}>"
            else:
                key = a.name
            args[key] = arg_value(a)
        ref = track_ref(uuid)
        stack = open_slices.setdefault(uuid, [])
        # An event's own stack (TrackEvent.callstack, outermost frame
        # first): kept only where there is one.
        callstack = {}
        if event.HasField("callstack"):
            callstack["callstack"] = [
                {"function": f.function_name, "file": f.source_file if f.HasField("source_file") else None,
                 "line": f.line_number if f.HasField("line_number") else None}
                for f in event.callstack.frames
            ]
        if event.type == TrackEvent.TYPE_SLICE_BEGIN:
            stack.append({"track": ref, "depth": len(stack), "name": name, "ts": ts, "args": args, **callstack})
        elif event.type == TrackEvent.TYPE_SLICE_END:
            if not stack:
                violations.append(f"packet {i}: TYPE_SLICE_END on {ref} without its TYPE_SLICE_BEGIN")
                continue
            s = stack.pop()
            slices.append({"track": s["track"], "depth": s["depth"], "name": s["name"], "ts": s["ts"], "dur": ts - s["ts"], "args": s["args"],
                           **{k: v for k, v in s.items() if k == "callstack"}})
        elif event.type == TrackEvent.TYPE_INSTANT:
            if ref == f"global:{LOST_TRACK}":
                lost.append({"ts": ts, "name": name})
            else:
                instants.append({"track": ref, "depth": len(stack), "name": name, "ts": ts, "args": args, **callstack})
        else:
            violations.append(f"packet {i}: unexpected track event type {event.type}")
    for uuid, stack in open_slices.items():
        for s in stack:
            violations.append(f"{s['track']}: TYPE_SLICE_BEGIN of {s['name']!r} at {s['ts']} has no TYPE_SLICE_END")

    states = thread_states(ftrace)
    key = lambda s: (s["track"], s["ts"], s["depth"])
    summary = {
        "packets": len(trace.packet),
        "processes": [processes[p] for p in sorted(processes)],
        "threads": [threads[t] for t in sorted(threads)],
        "slices": sorted(slices, key=key),
        "instants": sorted(instants, key=key),
        "lost": sorted(lost, key=lambda l: l["ts"]),
        "ftrace": sorted(ftrace, key=lambda e: (e["cpu"], e["ts"])),
        "thread_states": states,
        "slice_states": slice_states(sorted(slices, key=key), states),
    }
    return summary, violations


def ftrace_events(trace, snapshot):
    """Every ftrace event, its time on the trace's clock, and what is wrong
    with them."""
    events, violations = [], []
    last = {}
    for i, packet in enumerate(trace.packet):
        if not packet.HasField("ftrace_events"):
            continue
        bundle = packet.ftrace_events
        if not bundle.HasField("cpu"):
            violations.append(f"packet {i}: an ftrace bundle without its cpu")
            continue
        if bundle.cpu >= MAX_CPUS:
            violations.append(f"packet {i}: an ftrace bundle of cpu {bundle.cpu}, which Perfetto refuses")
        if bundle.HasField("ftrace_clock"):
            violations.append(f"packet {i}: an ftrace bundle on clock {bundle.ftrace_clock}, not the default CLOCK_BOOTTIME")
            continue
        if CLOCK_BOOTTIME not in snapshot or CLOCK_MONOTONIC not in snapshot:
            violations.append(f"packet {i}: ftrace events on CLOCK_BOOTTIME, but no clock snapshot ties it to CLOCK_MONOTONIC")
            continue
        for event in bundle.event:
            kind = event.WhichOneof("event")
            if kind not in SCHED_EVENTS:
                violations.append(f"packet {i}: an unexpected ftrace event {kind}")
                continue
            if not event.HasField("timestamp") or not event.HasField("pid"):
                violations.append(f"packet {i}: a {kind} without its timestamp or pid")
                continue
            ts = event.timestamp - snapshot[CLOCK_BOOTTIME] + snapshot[CLOCK_MONOTONIC]
            if ts < last.get(bundle.cpu, 0):
                violations.append(f"packet {i}: time goes back on cpu {bundle.cpu} ({ts} after {last[bundle.cpu]})")
            last[bundle.cpu] = max(ts, last.get(bundle.cpu, 0))
            fields = {f.name: v for f, v in getattr(event, kind).ListFields()}
            events.append({"cpu": bundle.cpu, "ts": ts, "pid": event.pid, "event": kind, "fields": fields})
    return events, violations


# Perfetto's TaskState flags (src/trace_processor/types/task_state.h).
RUNNABLE, S, D, T, t, X, Z = 0, 0x1, 0x2, 0x4, 0x8, 0x10, 0x20
PARKED, TASK_DEAD, WAKEKILL, WAKING, NOLOAD, IDLE, PREEMPTED = 0x40, 0x80, 0x100, 0x200, 0x400, 0x4000, 0x8000
LETTERS = [(S, "S"), (D, "D"), (T, "T"), (t, "t"), (X, "X"), (Z, "Z"), (PARKED, "P"), (TASK_DEAD, "x"),
           (WAKEKILL, "K"), (WAKING, "W"), (NOLOAD, "N"), (IDLE, "I")]
# ui.perfetto.dev's names (ui/src/components/sql_utils/thread_state.ts).
NAMES = {"R": "Runnable", "S": "Sleeping", "D": "Uninterruptible Sleep", "T": "Stopped", "t": "Traced",
         "X": "Exit (Dead)", "Z": "Exit (Zombie)", "x": "Task Dead", "I": "Idle", "K": "Wake Kill",
         "W": "Waking", "P": "Parked", "N": "No Load", "+": "(Preempted)"}


def prev_state(raw):
    """A sched_switch's prev_state as Perfetto reads it when the trace names
    no kernel version: Linux 4.4's layout (TaskState's constructor)."""
    parsed = raw & 0x3F
    for bit, flag in ((0x40, TASK_DEAD), (0x80, WAKEKILL), (0x100, WAKING), (0x200, PARKED), (0x400, NOLOAD)):
        if raw & bit:
            parsed |= flag
    if parsed == D | NOLOAD:
        parsed = IDLE
    if raw & 0x800:
        parsed |= PREEMPTED
    if parsed & ~PREEMPTED == RUNNABLE:
        return "R+" if parsed & PREEMPTED else "R"
    return "".join(c for flag, c in LETTERS if parsed & flag)


def state_name(state):
    """The name ui.perfetto.dev shows for a state (translateState)."""
    if state == "Running":
        return state
    name = NAMES.get(state[0], state)
    for c in state[1:]:
        name += (" " if c == "+" else " + ") + NAMES.get(c, c)
    return name


def thread_states(events):
    """Every thread's states from its ftrace events, as the trace processor
    builds its thread_state table."""
    states = []
    current = {}  # tid -> the state it is in

    def enter(tid, ts, state, waker=None):
        if tid == 0:
            return
        now = current.get(tid)
        if now is not None:
            now["dur"] = ts - now["ts"]
        current[tid] = {"tid": tid, "ts": ts, "dur": None, "state": state, "name": state_name(state), "waker_tid": waker}
        states.append(current[tid])

    for e in sorted(events, key=lambda e: e["ts"]):
        f = e["fields"]
        if e["event"] == "sched_switch":
            enter(f.get("prev_pid", 0), e["ts"], prev_state(f.get("prev_state", 0)))
            enter(f.get("next_pid", 0), e["ts"], "Running")
        elif e["event"] == "sched_waking":
            wakee = f.get("pid", 0)
            if current.get(wakee, {}).get("state") != "Running":
                enter(wakee, e["ts"], "R", waker=e["pid"])
    return sorted(states, key=lambda s: (s["tid"], s["ts"]))


def slice_states(slices, states):
    """For each slice on a thread's track, its thread's time in each state."""
    out = []
    for s in slices:
        if not s["track"].startswith("thread:"):
            continue
        tid = int(s["track"].split(":", 1)[1])
        start, end = s["ts"], s["ts"] + s["dur"]
        spent = {}
        for st in states:
            if st["tid"] != tid:
                continue
            st_end = end if st["dur"] is None else st["ts"] + st["dur"]
            overlap = min(end, st_end) - max(start, st["ts"])
            if overlap > 0:
                spent[st["name"]] = spent.get(st["name"], 0) + overlap
        out.append({"track": s["track"], "name": s["name"], "ts": s["ts"], "dur": s["dur"], "states": spent})
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv))
