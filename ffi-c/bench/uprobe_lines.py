#!/usr/bin/env python3
"""uprobe_events lines for every USDT probe site of a binary: file offsets
of each Location and of the semaphore (ref_ctr_offset), from readelf.
  uprobe_lines.py BINARY GROUP"""
import re
import subprocess
import sys

binary, group = sys.argv[1], sys.argv[2]
segs = []
for line in subprocess.check_output(["readelf", "-lW", binary], text=True).splitlines():
    f = line.split()
    if f and f[0] == "LOAD":
        segs.append((int(f[1], 16), int(f[2], 16), int(f[5], 16)))  # offset, vaddr, memsz


def offset(vaddr):
    for off, va, size in segs:
        if va <= vaddr < va + size:
            return vaddr - va + off
    raise SystemExit(f"no LOAD segment holds {vaddr:#x}")


notes = subprocess.check_output(["readelf", "-nW", binary], text=True)
regs = {"eax": "ax", "ebx": "bx", "ecx": "cx", "edx": "dx", "esi": "si", "edi": "di", "ebp": "bp"}
i = 0
for m in re.finditer(r"Location: (0x[0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: (0x[0-9a-f]+)\s+Arguments: (\S+)", notes):
    loc, sem, arg = int(m[1], 16), int(m[2], 16), m[3]
    reg = re.fullmatch(r"-?4@%(\w+)", arg)
    fetch = ""
    if reg:
        r = reg[1]
        r = regs.get(r, re.sub(r"d$", "", r))  # %r12d -> %r12
        fetch = f" v=%{r}:u32"
    print(f"p:{group}/probe4_{i} {binary}:{offset(loc):#x}({offset(sem):#x}){fetch}")
    i += 1
