"""Copies Perfetto's .proto files for usertrace-output, trimmed to what
compiles on its own: imports of files not vendored are dropped, and so is
every field (with the comment above it) whose message or enum type is not
defined in the vendored files. Field numbers are untouched.

    python3 output/proto/trim.py PERFETTO_GIT_DIR output/proto

PERFETTO_GIT_DIR is a clone (or bare repository) of google/perfetto; the
files are taken from its HEAD. See README.md beside this script."""
import re, subprocess, sys, os

GIT = sys.argv[1]
OUT = sys.argv[2]
FILES = [
    "protos/perfetto/trace/trace.proto",
    "protos/perfetto/trace/trace_packet.proto",
    "protos/perfetto/trace/trace_packet_defaults.proto",
    "protos/perfetto/trace/clock_snapshot.proto",
    "protos/perfetto/common/builtin_clock.proto",
    "protos/perfetto/trace/interned_data/interned_data.proto",
    "protos/perfetto/trace/track_event/track_event.proto",
    "protos/perfetto/trace/track_event/debug_annotation.proto",
    "protos/perfetto/trace/track_event/track_descriptor.proto",
    "protos/perfetto/trace/track_event/process_descriptor.proto",
    "protos/perfetto/trace/track_event/thread_descriptor.proto",
    "protos/perfetto/trace/track_event/counter_descriptor.proto",
    "protos/perfetto/trace/ftrace/ftrace_event_bundle.proto",
    "protos/perfetto/trace/ftrace/ftrace_event.proto",
    "protos/perfetto/trace/ftrace/ftrace_stats.proto",
    "protos/perfetto/trace/ftrace/sched.proto",
]
DROP_MESSAGES = {"ProtoVms"}

def show(path):
    return subprocess.run(["git", "--git-dir", GIT, "show", "HEAD:" + path], check=True, capture_output=True, text=True).stdout

texts = {f: show(f) for f in FILES}
defined = set()
for t in texts.values():
    defined |= set(re.findall(r"^(?:message|enum)\s+(\w+)", t, re.M))
defined -= DROP_MESSAGES
SCALARS = {"double","float","int32","int64","uint32","uint64","sint32","sint64","fixed32","fixed64","sfixed32","sfixed64","bool","string","bytes"}
field_re = re.compile(r"^\s*(?:(?:optional|repeated|required)\s+)?([A-Za-z_][\w.]*)\s+\w+\s*=")

def trim(text):
    lines = text.split("\n")
    out = []
    i = 0
    dropped = []
    scope = set()
    while i < len(lines):
        line = lines[i]
        m_imp = re.match(r'^import "(.*)";', line)
        if m_imp:
            if m_imp.group(1) not in FILES:
                i += 1
                continue
        m_msg = re.match(r"^\s*message\s+(\w+)\s*\{", line)
        if m_msg and m_msg.group(1) in DROP_MESSAGES:
            while out and out[-1].strip().startswith("//"):
                out.pop()
            depth = 0
            while True:
                depth += lines[i].count("{") - lines[i].count("}")
                i += 1
                if depth == 0:
                    break
            dropped.append("message " + m_msg.group(1))
            continue
        m_top = re.match(r"^message\s+(\w+)\s*\{", line)
        if m_top:
            depth, j, block = 0, i, []
            while True:
                depth += lines[j].count("{") - lines[j].count("}")
                block.append(lines[j])
                j += 1
                if depth == 0:
                    break
            scope = set() | set(re.findall(r"^\s+(?:message|enum)\s+(\w+)", "\n".join(block), re.M)) - DROP_MESSAGES
        stmt = line
        k = i
        while (field_re.match(stmt) is None and re.match(r"^\s*(?:(?:optional|repeated|required)\s+)?[A-Z][\w.]*\s*$", stmt)
               and k + 1 < len(lines)):
            k += 1
            stmt = stmt + " " + lines[k].strip()
        m = field_re.match(stmt)
        if m and not line.strip().startswith(("//", "option ", "reserved ", "extensions ")):
            typ = m.group(1).split(".")[0]
            if typ not in SCALARS and typ not in defined and typ not in scope:
                while out and out[-1].strip().startswith("//"):
                    out.pop()
                name = line.split("=")[0].split()[-1]
                while not lines[i].rstrip().endswith(";"):
                    i += 1
                i += 1
                dropped.append(name)
                continue
        out.append(line)
        i += 1
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out))
    if dropped:
        text = text.replace(" */\n", " */\n\n// usertrace: a trimmed copy (see output/proto/README.md): fields whose types\n// are not vendored were removed; every remaining field keeps its number.\n", 1)
    return text, dropped

for f in FILES:
    text, dropped = trim(texts[f])
    dest = os.path.join(OUT, f)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w") as fh:
        fh.write(text)
    print(f"{f}: dropped {len(dropped)}: {', '.join(dropped)}")
