#!/usr/bin/env python3
"""bench.py - measures xom against its baselines and writes results.md.

  bench.py --full  --out DIR   every section (about 15 minutes on two cores)
  bench.py --quick --out DIR   a small fixed subset (under a minute)
  bench.py --check DIR         checks that DIR/results.md is well-formed

Every figure is printed next to a baseline measured in the same run, because
the machines this runs on are shared and noisy: an absolute time says little,
a ratio taken minutes apart says little more, a ratio taken in alternating
runs says something.  The timing itself is done by small C programs (the
runner, the Capstone baseline, the in-process scan timer); this script only
orders the runs and writes the tables.  The build directory comes from $B.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

B = os.environ.get("B", "build")
RUNNER = os.path.join(B, "bench", "runner")
CSDEC = os.path.join(B, "bench", "capstone_decode")
SCANT = os.path.join(B, "bench", "scan_time")
EMPTY = os.path.join(B, "bench", "libempty.so")
DLOPEN1 = os.path.join(B, "bench", "dlopen_one")
DLOOP = os.path.join(B, "bench", "dlopen_loop")
MANYDIR = os.path.join(B, "bench", "many")
MANY = os.path.join(MANYDIR, "many")
MANY_N = 200
DCYCLE = os.path.join(B, "bench", "dlopen_cycle")
CYCLEDIR = os.path.join(B, "bench", "cycle")
SCANRATIO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scan_ratio.sh")
XOMSCAN = os.path.join(B, "xom-scan")
LIBXOM = os.path.join(B, "libxom.so")
XOM = os.path.join(B, "xom")

LIBDIR = "/usr/lib/x86_64-linux-gnu"
# The interpreter that Debian's python3 is (python3.11 on Debian 12,
# python3.13 on Debian 13): a large real program, by its real path.
DEBIAN_PY = os.path.realpath("/usr/bin/python3")
SPEED_FILES = [f"{LIBDIR}/libc.so.6", f"{LIBDIR}/libcrypto.so.3", DEBIAN_PY]
# python3 of the distribution, not one that a user installed elsewhere.
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"

PAGE = 4096


def env_without_xom():
    """This process's environment less what would load or steer xom."""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "XOM_OPTIONS")}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- Helpers ---------------------------------------------------------------

def run_timed(specs, n, warmup=2):
    """Runs the runner on specs ('label:cmd'); returns {label: fields}."""
    p = subprocess.run([RUNNER, "-n", str(n), "-w", str(warmup)] + specs,
                       capture_output=True, text=True)
    if p.returncode == 2:
        raise RuntimeError("runner: " + p.stderr.strip())
    out = {}
    for line in p.stdout.splitlines():
        label, *kv = line.split()
        out[label] = {k: float(v) for k, v in (x.split("=") for x in kv)}
    return out


def code_bytes(path):
    """Bytes of the file's SHF_EXECINSTR sections, as the baseline decodes."""
    p = subprocess.run([CSDEC, path], capture_output=True, text=True)
    m = re.search(r"code_bytes=(\d+)", p.stdout)
    return int(m.group(1)) if m else 0


def fmt_ratio(x):
    return "n/a" if x is None else f"{x:.2f}"


def table(head, rows):
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def runtime_built():
    return os.path.exists(LIBXOM)


# ---- 1. Scan speed -----------------------------------------------------------

def scan_speed(files, n, rep):
    rows, heads = [], []
    for f in files:
        if not os.path.exists(f):
            rows.append([f, "missing on this machine"] + [""] * 8)
            continue
        cb = code_bytes(f)
        mb = cb / 1e6
        # In-process: the decode loop alone, and the scanner alone.
        cs_in = float(re.search(r"best_s=([\d.]+)", subprocess.run(
            [CSDEC, "-r", str(rep), f], capture_output=True, text=True).stdout).group(1))
        sc_in = float(re.search(r"best_s=([\d.]+)", subprocess.run(
            [SCANT, "-r", str(rep), f], capture_output=True, text=True).stdout).group(1))
        t = run_timed([f"xom-scan:{XOMSCAN} {f}", f"capstone:{CSDEC} {f}",
                       f"objdump:objdump -d {f}"], n, warmup=1)
        xs, cs, od = (t[k]["median_us"] / 1e6 for k in ("xom-scan", "capstone", "objdump"))
        xs_min, cs_min = t["xom-scan"]["min_us"] / 1e6, t["capstone"]["min_us"] / 1e6
        rows.append([os.path.basename(f), f"{mb:.2f}",
                     f"{mb / xs:.1f}", f"{mb / cs:.1f}", f"{mb / od:.1f}",
                     f"**{xs / cs:.2f}**", f"{xs_min / cs_min:.2f}",
                     f"{sc_in / cs_in:.2f}", f"{od / xs:.2f}",
                     f"{t['xom-scan']['maxrss_kb'] / 1024:.1f}"])
        heads.append((os.path.basename(f), xs / cs, od / xs, mb / xs))
    md = ("## 1. Scan speed\n\n"
          f"Whole-process wall time, median of {n} alternating runs (runner), of\n"
          "`xom-scan FILE`, of `capstone_decode FILE` (a bare Capstone decode with\n"
          "`CS_OPT_DETAIL` of the same SHF_EXECINSTR bytes: `cs_disasm_iter` with one\n"
          "`cs_malloc`'d instruction, one byte skipped where decoding fails) and of\n"
          "`objdump -d FILE >/dev/null`.  MB is 10^6 bytes of code handed to the\n"
          f"decoder.  \"in-process\" is the best of {rep} scans (`scan_time`) over the\n"
          f"best of {rep} decodes in one process, without start-up and output.\n"
          "Goal: xom-scan / Capstone <= 1.25.\n\n")
    md += table(["file", "code MB", "xom-scan MB/s", "Capstone MB/s", "objdump MB/s",
                 "xom-scan / Capstone (median)", "(best run)", "(in-process)",
                 "objdump / xom-scan", "xom-scan peak RSS MB"], rows)
    return md, heads


def planned_objects(cmd, cache):
    """The objects that the runtime plans for cmd, from its verbose lines."""
    _calls, lines = protection_calls(cmd, cache)
    objs = []
    for l in lines:
        m = re.match(r"xom: (/\S+|\S+\.so\S*): \d+ pages execute-only", l)
        if m and os.path.exists(m.group(1)):
            objs.append(m.group(1))
    return objs


def warm_cache_speed(n):
    md = "### Scan speed with the plan cache warm\n\n"
    if not runtime_built():
        return md + ("**runtime not built**: there is no `libxom.so` in the build, so the "
                     "plan cache cannot be measured in this run.\n\n"), None
    cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
    opts = f"XOM_OPTIONS=backend=none:cache={cache}"
    progs = [("libc.so.6", "/bin/true"),
             ("libcrypto.so.3", f"{DLOPEN1} {LIBDIR}/libcrypto.so.3"),
             (os.path.basename(DEBIAN_PY), f"{DEBIAN_PY} -c pass")]
    rows, head = [], None
    for name, cmd in progs:
        if not os.path.exists(cmd.split()[-1] if "dlopen" in cmd else cmd.split()[0]):
            continue
        objs = planned_objects(cmd, cache)      # also fills the cache
        mb = sum(code_bytes(o) for o in objs) / 1e6
        t = run_timed([f"empty:LD_PRELOAD={EMPTY} {cmd}",
                       f"warm:LD_PRELOAD={LIBXOM} {opts} {cmd}",
                       f"cold:@clear={cache} LD_PRELOAD={LIBXOM} {opts} {cmd}"], n, warmup=1)
        e, w, c = (t[k]["median_us"] / 1e3 for k in ("empty", "warm", "cold"))
        planned = ", ".join(os.path.basename(o) for o in objs)
        rows.append([name, f"`{cmd.replace(B + '/', '')}`", f"{len(objs)} ({planned})",
                     f"{mb:.2f}", f"{e:.2f}", f"{w:.2f}", f"{c:.2f}", f"{w - e:+.2f}",
                     f"{mb / max((c - e) / 1e3, 1e-6):.1f}", f"**{c / w:.0f}**"])
        if name == "libcrypto.so.3":
            head = (w - e, c - e, c / w)
        # The cold runs emptied the cache; the next program starts warm again.
    shutil.rmtree(cache, ignore_errors=True)
    md += ("The runtime's own path (LD_PRELOAD libxom.so, `backend=none`) with the plan\n"
           "cache warm and cold (emptied before every run), against an empty preload,\n"
           f"median of {n} alternating runs.  \"objects planned\" are the ones the\n"
           "runtime reported (verbose=1); \"MB planned\" their code.  With the cache\n"
           "warm no object is scanned, so instead of a scan speed the table gives the\n"
           "time xom adds to the empty preload (within noise when near zero); cold,\n"
           "the effective scan speed is the code planned over the time added.\n\n")
    md += table(["object", "command", "objects planned", "MB planned", "empty preload ms",
                 "warm ms", "cold ms", "warm: ms added", "cold: effective MB/s",
                 "cold / warm"], rows)
    return md, head


# ---- 2. Start-up -------------------------------------------------------------

def protection_calls(cmd, cache):
    """The count of protection calls backend=none reports for cmd, or None."""
    env = env_without_xom()
    env["LD_PRELOAD"] = LIBXOM
    env["XOM_OPTIONS"] = f"backend=none:verbose=2:cache={cache}"
    p = subprocess.run(cmd.split(), env=env, capture_output=True, text=True)
    # One line per object; a totals line, if any, does not name pages.
    lines = p.stderr.splitlines()
    m = [int(x) for l in lines if "pages execute-only" in l
         for x in re.findall(r"(\d+) protection calls", l)]
    return (sum(m) if m else None), lines


def startup_progs(quick):
    """(name, command, goal, cold, runs) of the start-up rows, runs being
    how many times a full run's count a program takes (the quick programs
    more, for the same precision); `ffmpeg -version`,
    the issue's many-object program, only in a full run where ffmpeg is
    installed (its first, cold run takes seconds, and has its own row in 2b)."""
    progs = [("/bin/true", "/bin/true", 1.08, True, 10),
             ("python3 -c pass", f"{PYTHON} -c pass", 1.02, True, 3),
             (f"many ({MANY_N} libraries)", MANY, 1.02, True, 3)]
    ff = shutil.which("ffmpeg")
    if ff and not quick:
        progs.append(("ffmpeg -version", f"{ff} -version", 1.02, False, 1))
    return progs


def startup(n, n_cold, quick):
    md = ("## 2. Start-up\n\n"
          "Wall time from spawn to exit, the median of many runs each (the count is\n"
          "in the table; a short program gets more), all variants of a\n"
          "program alternating in one loop (runner); the cold runs, which take\n"
          f"longer, alternate with an empty preload in a loop of their own ({n_cold} runs).\n"
          "The baseline is an empty\n"
          "`LD_PRELOAD` library (`libempty.so`): it pays for loading one more object,\n"
          "so the ratio against it is what xom itself costs.  `backend=none` runs the\n"
          "whole runtime path (plan lookup, segment walk) except the protection\n"
          "system calls, because this machine's CPU does not expose protection keys;\n"
          "the calls it would have made are counted separately.  `many` is\n"
          f"`bench/gen_many.sh`'s program, linked against {MANY_N} small libraries: a\n"
          "harder case than `ffmpeg -version` (as many objects, a quarter of the run\n"
          "time), and the one measured where ffmpeg is not installed.\n"
          "Goals: warm <= 1.08x the empty preload for /bin/true, <= 1.02x for\n"
          "python3, ffmpeg and the many-object program.\n\n")
    heads = {}
    if not runtime_built():
        md += "**runtime not built**: no `libxom.so` in the build; only plain and empty preload are timed.\n\n"
    cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
    rows = []
    for name, cmd, goal, cold, times in startup_progs(quick):
        runs = n * (1 if quick else times)
        specs = [f"plain:{cmd}", f"empty:LD_PRELOAD={EMPTY} {cmd}"]
        opts = f"XOM_OPTIONS=backend=none:cache={cache}"
        calls = c = None
        if runtime_built():
            calls, _ = protection_calls(cmd, cache)    # also warms the cache
            specs.append(f"warm:LD_PRELOAD={LIBXOM} {opts} {cmd}")
        t = run_timed(specs, runs)
        med = {k: v["median_us"] / 1e3 for k, v in t.items()}
        e = med["empty"]
        w = med.get("warm")
        if runtime_built() and cold:
            tc = run_timed([f"empty:LD_PRELOAD={EMPTY} {cmd}",
                            f"cold:@clear={cache} LD_PRELOAD={LIBXOM} {opts} {cmd}"], n_cold)
            c, ec = tc["cold"]["median_us"] / 1e3, tc["empty"]["median_us"] / 1e3
            protection_calls(cmd, cache)    # the cold runs emptied the cache
        rw = w / e if w else None
        rows.append([name, str(runs), f"{med['plain']:.2f}", f"{e:.2f}",
                     f"{w:.2f}" if w else "runtime not built",
                     f"{c:.2f}" if c else ("in 2b" if cold is False else "runtime not built"),
                     fmt_ratio(med["plain"] / e), f"**{fmt_ratio(rw)}**",
                     fmt_ratio(c / ec if c else None), f"<= {goal:.2f}",
                     "n/a" if calls is None else str(calls)])
        best = (t["warm"]["min_us"] / t["empty"]["min_us"]) if w else None
        heads[name] = (rw, c / ec if c else None, calls, best, med["plain"] / e)
    shutil.rmtree(cache, ignore_errors=True)
    md += table(["program", "runs", "plain ms", "empty preload ms", "xom warm ms", "xom cold ms",
                 "plain / empty", "warm / empty", "cold / empty", "goal (warm)",
                 "protection calls (would be made)"], rows)
    return md, heads


# ---- 2b. The start-up floor and dlopen: the targets ------------------

def strace(args, env_extra):
    """strace -f's lines for one run of args, and its exit status."""
    env = env_without_xom()
    env.update(env_extra)
    with tempfile.NamedTemporaryFile(prefix="xom-bench-strace-") as f:
        p = subprocess.run(["strace", "-f", "-qq", "-o", f.name] + args, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return open(f.name).read().splitlines(), p.returncode


def lookup_calls(cmd, cache):
    """System calls per process: those on the stores' index files (opens of
    an index, the lstat that checks a kept one, and the fstat, pread, mmap,
    close and munmap of what they opened),
    and all calls with xom and with the empty preload, from strace -f."""
    xom = strace(cmd.split(), {"LD_PRELOAD": LIBXOM, "XOM_OPTIONS": f"backend=none:cache={cache}"})[0]
    empty = strace(cmd.split(), {"LD_PRELOAD": EMPTY})[0]
    fds, maps, n = set(), set(), 0
    for l in xom:
        l = re.sub(r"^\d+\s+", "", l)
        if re.match(r'(lstat|newfstatat)\((AT_FDCWD, )?"[^"]*/plans", ', l):
            n += 1
            continue
        m = re.match(r'(open|openat)\(.*"[^"]*/plans", .*\) = (-?\d+)', l)
        if m:
            n += 1
            if int(m.group(2)) >= 0:
                fds.add(m.group(2))
            continue
        m = re.match(r"(\w+)\((\d+)[,)]", l)
        if m and m.group(1) in ("fstat", "newfstatat", "pread64", "close") and m.group(2) in fds:
            n += 1
            if m.group(1) == "close":
                fds.discard(m.group(2))
            continue
        m = re.match(r"mmap\(.*, (\d+), 0\) = (0x[0-9a-f]+)", l)
        if m and m.group(1) in fds:
            n += 1
            maps.add(m.group(2))
            continue
        m = re.match(r"munmap\((0x[0-9a-f]+),", l)
        if m and m.group(1) in maps:
            n += 1
            maps.discard(m.group(1))
    return n, len(xom), len(empty)


def callgrind(cmd, env_extra):
    """The lines of callgrind's output for one run of cmd (empty when it
    wrote none)."""
    env = env_without_xom()
    env.update(env_extra)
    with tempfile.TemporaryDirectory(prefix="xom-bench-cg-") as d:
        out = os.path.join(d, "out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
                       + cmd.split(), env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        try:
            return open(out).read().splitlines()
        except OSError:
            return []


def total_of(lines):
    """The instructions in all of callgrind's output lines, or None."""
    return next((int(l.split()[1]) for l in lines
                 if l.startswith(("summary:", "totals:"))), None)


def instructions(cmd, env_extra):
    """callgrind's count of the instructions one run of cmd executes in user
    space, or None."""
    return total_of(callgrind(cmd, env_extra))


def dlopen_speed(procs, rounds, per):
    """dlopen_loop with and without xom, one process of each in turn;
    returns the medians over the processes of their per-operation medians."""
    res = {"plain": [], "xom": []}
    env0 = env_without_xom()
    cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
    xenv = dict(env0, LD_PRELOAD=LIBXOM, XOM_OPTIONS=f"backend=none:cache={cache}")
    args = [DLOOP, MANYDIR, str(MANY_N), str(rounds), str(per)]
    subprocess.run(args[:3] + ["1", "1"], env=xenv, capture_output=True)   # warms the cache
    objects = None
    for i in range(procs):
        order = [("plain", env0), ("xom", xenv)]
        for name, env in (order if i % 2 == 0 else order[::-1]):
            p = subprocess.run(args, env=env, capture_output=True, text=True)
            m = re.search(r"objects=(\d+) repeat_ns=(\d+) cycle_ns=(\d+)", p.stdout)
            if not m:
                shutil.rmtree(cache, ignore_errors=True)
                raise RuntimeError("dlopen_loop: " + p.stderr.strip())
            objects = int(m.group(1))
            res[name].append((int(m.group(2)), int(m.group(3))))
    shutil.rmtree(cache, ignore_errors=True)
    med = lambda xs: sorted(xs)[len(xs) // 2]
    out = {k: (med([a for a, _ in v]), med([b for _, b in v])) for k, v in res.items()}
    # Each xom process against the plain one run next to it.
    pairs = list(zip(res["xom"], res["plain"]))
    for j, key in ((0, "repeat"), (1, "cycle")):
        r = sorted(x[j] / p[j] for x, p in pairs)
        out[key] = (med(r), r[0], r[-1])
    return out, objects


def cycle_counts(objects, cycles=(10, 30)):
    """One dlopen+dlclose cycle of a new library with `objects` libraries
    loaded (bench/dlopen_cycle): (instructions without xom, with xom, system
    calls without, with), each the difference between runs of two numbers of
    cycles over their difference, so that start-up and the loads before
    cancel out; None when a run failed.  Plans come from a user cache of
    their own, warmed first."""
    cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
    xenv = {"LD_PRELOAD": LIBXOM, "XOM_OPTIONS": f"backend=none:cache={cache}"}

    def ir(n, extra):
        return instructions(f"{DCYCLE} {CYCLEDIR} {objects} {n}", extra)

    def calls(n, extra):
        lines, rc = strace([DCYCLE, CYCLEDIR, str(objects), str(n)], extra)
        return len(lines) if rc == 0 else None

    try:
        env = env_without_xom()
        env.update(xenv)
        subprocess.run([DCYCLE, CYCLEDIR, str(objects), "2"], env=env, capture_output=True)
        # Under valgrind its own preloads join: planned in a first run.
        ir(2, xenv)
        lo, hi = cycles
        out = []
        for fn in (ir, calls):
            for extra in ({}, xenv):
                a, b = fn(lo, extra), fn(hi, extra)
                if a is None or b is None:
                    return None
                out.append((b - a) / (hi - lo))
        return tuple(out)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def store_lookups(cmd, env_extra):
    """The plan-store lookups of one run of cmd, from callgrind's call
    counts: (sets looked for in a store that is there, plans looked up one
    by one), or None."""
    lines = callgrind(cmd, env_extra)
    if not lines:
        return None
    return inclusive(lines, "xom_store_find_set")[1], inclusive(lines, "xom_store_find")[1]


# Sixteen exclude patterns that match none of `many`'s objects: paths, and
# names with wildcards, as /etc/xom.conf and XOM_OPTIONS hold them.
EXCLUDE16 = ",".join(f"/opt/nothing{i}/*" if i % 2 else f"*libnothing{i}*.so*"
                     for i in range(16))


def inclusive(lines, fn):
    """callgrind's instructions in fn and what it calls (the sum over its
    call sites), and the number of calls."""
    names, target, cost, calls, after_call = {}, None, 0, 0, False
    for l in lines:
        m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", l)
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2).strip()
            if l.startswith("cfn="):
                target = names.get(m.group(1))
            after_call = False
            continue
        m = re.match(r"calls=(\d+) ", l)
        if m:
            after_call = target == fn
            if after_call:
                calls += int(m.group(1))
            continue
        if after_call:
            parts = l.split()
            if len(parts) >= 2:
                cost += int(parts[1])
            after_call = False
    return cost, calls


def exclude_costs():
    """`many`'s warm start with EXCLUDE16 and without, under callgrind:
    (instructions per pattern and object, instructions of the lookup pass
    per object without patterns, objects), or None."""
    cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
    try:
        base = f"backend=none:store=off:cache={cache}"
        out = {}
        for name, opts in (("none", base), ("16", f"{base}:exclude={EXCLUDE16}")):
            env = {"LD_PRELOAD": LIBXOM, "XOM_OPTIONS": opts}
            callgrind(MANY, env)        # valgrind's preloads join the batch
            lines = callgrind(MANY, env)
            total = total_of(lines)
            if total is None:
                return None
            out[name] = (total, inclusive(lines, "xom_batch_lookup")[0])
        # The objects of the start-up batch, under valgrind as measured.
        env = env_without_xom()
        env.update(LD_PRELOAD=LIBXOM, XOM_OPTIONS=f"{base}:verbose=1")
        p = subprocess.run(["valgrind", "--tool=none", MANY], env=env,
                           capture_output=True, text=True)
        objects = len(re.findall(r"^xom: .*: \d+ pages? execute-only", p.stderr, re.M))
        if not objects or not out["none"][1]:
            return None
        per_pattern = (out["16"][0] - out["none"][0]) / (16 * objects)
        return per_pattern, out["none"][1] / objects, objects
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def warm_lookups():
    """`many`'s warm start from the user's cache, and from a system store
    that holds the same plans and sets: {"user": (sets, plans), "system":
    ...}; the system store only as root (its folders must be root's
    alone)."""
    out = {}
    cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
    try:
        xenv = {"LD_PRELOAD": LIBXOM, "XOM_OPTIONS": f"backend=none:store=off:cache={cache}"}
        # Under valgrind its own preloads join the batch: a first run
        # plans them and keeps the batch's set, the second is warm.
        store_lookups(MANY, xenv)
        out["user"] = store_lookups(MANY, xenv)
        if os.geteuid() == 0:
            # A system store that holds what the warm cache holds, the
            # batch's set among it (under valgrind the batch has valgrind's
            # preloads, which no `xom cache build` would list).
            d = tempfile.mkdtemp(prefix="xom-bench-", dir="/var/cache")
            try:
                os.chmod(d, 0o755)
                st = os.path.join(d, "s")
                shutil.copytree(cache, st)
                for root, dirs, files in os.walk(st):
                    os.chmod(root, 0o755)
                    for f in files:
                        os.chmod(os.path.join(root, f), 0o644)
                senv = {"LD_PRELOAD": LIBXOM,
                        "XOM_OPTIONS": f"backend=none:store={st}:cache=off"}
                out["system"] = store_lookups(MANY, senv)
            finally:
                shutil.rmtree(d, ignore_errors=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out


def cold_ffmpeg():
    """Seconds of one cold `ffmpeg -version`: empty user cache and fallback
    folder, no system store; None when there is no ffmpeg or runtime."""
    ff = shutil.which("ffmpeg")
    if not ff or not runtime_built():
        return None
    d = tempfile.mkdtemp(prefix="xom-bench-cold-")
    env = env_without_xom()
    env.update(XDG_CACHE_HOME=os.path.join(d, "cache"), XDG_RUNTIME_DIR=os.path.join(d, "run"),
               LD_PRELOAD=LIBXOM, XOM_OPTIONS="backend=none:store=off")
    os.mkdir(os.path.join(d, "run"), 0o700)
    t0 = time.monotonic()
    p = subprocess.run([ff, "-version"], env=env, capture_output=True)
    t = time.monotonic() - t0
    shutil.rmtree(d, ignore_errors=True)
    return t if p.returncode == 0 else None


def system_build():
    """`xom cache build --system` into an empty store of its own, then again
    on that store, now current: {"first": (seconds, plans built),
    "again": (seconds, CPU seconds, start-ups listed, unchanged)}, or None
    when not root (the system walk needs root)."""
    if os.geteuid() != 0 or not os.path.exists(XOM):
        return None
    d = tempfile.mkdtemp(prefix="xom-bench-store-")
    os.chmod(d, 0o755)
    cmd = [XOM, "cache", "build", "--system", "--store", os.path.join(d, "s")]
    out = {}
    try:
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        t = time.monotonic() - t0
        m = re.search(r"(\d+) plans? built", p.stderr)
        if p.returncode != 0 or not m:
            return None
        out["first"] = (t, int(m.group(1)))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True)
        t = time.monotonic() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        m = re.search(r"start-ups: (\d+) listed, (\d+) unchanged", p.stderr)
        if p.returncode == 0 and m:
            out["again"] = (t, cpu, int(m.group(1)), int(m.group(2)))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return out


def one_library_changed():
    """A store built for two programs that share a library of their own
    (built here, found by their RUNPATH) and for a score of the system's
    programs; built again with nothing changed, then after that library
    changed: {"unchanged": (seconds, listed), "changed": (seconds, listed,
    unchanged), "programs": n}, or None."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not os.path.exists(XOM) or not cc:
        return None
    d = tempfile.mkdtemp(prefix="xom-bench-lib-")
    try:
        src = os.path.join(d, "x.c")
        with open(src, "w") as f:
            f.write("#ifdef MAIN\nint shared(void);\nint main(void) { return shared() - 42; }\n"
                    "#else\nint shared(void) { return 42; }\n#endif\n")
        lib = os.path.join(d, "libshared.so")
        progs = [os.path.join(d, "prog-a"), os.path.join(d, "prog-b")]
        steps = [[cc, "-shared", "-fPIC", "-o", lib, src]]
        steps += [[cc, "-DMAIN", "-o", p, src, "-L" + d, "-lshared", "-Wl,-rpath,$ORIGIN"]
                  for p in progs]
        for step in steps:
            if subprocess.run(step, capture_output=True).returncode != 0:
                return None
        names = ("true", "ls", "cat", "cp", "grep", "sed", "gzip", "tar", "find", "sort",
                 "python3", "perl", "bash", "dash", "ssh", "curl", "git", "make", "gcc", "objdump")
        progs += [p for p in (shutil.which(n) for n in names) if p]
        # The store beside the programs' folder, not in it: a new file in
        # a RUNPATH folder is a change that lists its programs again.
        cmd = [XOM, "cache", "build", "--store", d + "-store"] + progs
        env = env_without_xom()
        # Files changed within two seconds of a build are read again by
        # the next (cmd/cache/facts.c): the new ones must be older.
        time.sleep(2.5)

        def build():
            t0 = time.monotonic()
            p = subprocess.run(cmd, env=env, capture_output=True, text=True)
            sec = time.monotonic() - t0
            m = re.search(r"start-ups: (\d+) listed, (\d+) unchanged", p.stderr)
            return (sec, int(m.group(1)), int(m.group(2))) if m else None
        if not build():
            return None
        again = build()
        st = os.stat(lib)
        os.utime(lib, ns=(st.st_atime_ns, st.st_mtime_ns - 10 ** 9))
        changed = build()
        if not again or not changed:
            return None
        return {"unchanged": again[:2], "changed": changed, "programs": len(progs)}
    finally:
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(d + "-store", ignore_errors=True)


def scan_instructions(files):
    """bench/scan_ratio.sh on each file:
    {name: (scan_ir, decode_ir, quiet_ir, ratio, quiet_ratio)}."""
    out = {}
    for f in files:
        if not os.path.exists(f):
            continue
        p = subprocess.run(["sh", SCANRATIO, "-B", B, f], capture_output=True, text=True)
        m = re.search(r"scan_ir=(\d+) decode_ir=(\d+) quiet_ir=(\d+) ratio=([\d.]+) "
                      r"quiet_ratio=([\d.]+)", p.stdout)
        if m:
            out[os.path.basename(f)] = (int(m.group(1)), int(m.group(2)), int(m.group(3)),
                                        float(m.group(4)), float(m.group(5)))
    return out


def targets(quick, start_heads):
    """The table of the start-up and dlopen targets: each figure beside its
    target, and whether it is met."""
    rows, head = [], []

    def row(what, fig, goal, met):
        rows.append([what, fig, goal, "n/a" if met is None else ("**met**" if met else "not met")])

    for name, _cmd, goal, _cold, _n in startup_progs(quick):
        rw, _c, _calls, best, pe = start_heads.get(name, (None,) * 5)
        # Without a preload a program cannot be slower than with an empty
        # one: when plain / empty strays from 1 by more than the target's
        # margin, the machine's noise is larger than what is measured.
        noisy = rw is not None and abs(pe - 1) > goal - 1
        what = (f"warm start-up `{name}`, xom / empty preload (medians; best runs: "
                f"{fmt_ratio(best) if best else 'n/a'}; plain / empty {fmt_ratio(pe)})")
        if noisy:
            rows.append([what, fmt_ratio(rw), f"<= {goal:.2f}",
                         "undecided: the noise (plain / empty) is larger than the margin"])
        else:
            row(what, fmt_ratio(rw) if rw else "not measured", f"<= {goal:.2f}",
                None if rw is None else rw <= goal)
    progs = (("/bin/true", "/bin/true"), ("python3 -c pass", f"{DEBIAN_PY} -c pass"
                                              if os.path.exists(DEBIAN_PY)
                                              else f"{PYTHON} -c pass"),
             (f"many ({MANY_N} libraries)", MANY))
    if runtime_built() and shutil.which("valgrind"):
        cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
        for name, cmd in progs:
            protection_calls(cmd, cache)       # warms the cache
            e = instructions(cmd, {"LD_PRELOAD": EMPTY})
            xenv = {"LD_PRELOAD": LIBXOM, "XOM_OPTIONS": f"backend=none:cache={cache}"}
            # Under valgrind the program maps valgrind's own preloads too:
            # a first run plans them (and keeps the batch's set), the second
            # is the warm one.
            instructions(cmd, xenv)
            x = instructions(cmd, xenv)
            if e and x:
                row(f"warm start-up `{name}`, instructions in user space, xom / empty preload "
                    f"({x / 1e3:.0f}k / {e / 1e3:.0f}k, {(x - e) / 1e3:+.0f}k)", f"{x / e:.3f}",
                    "", None)
                head.append(f"{name}: instructions {x / e:.3f}x")
        shutil.rmtree(cache, ignore_errors=True)
    have_strace = shutil.which("strace") is not None
    if runtime_built() and have_strace:
        cache = tempfile.mkdtemp(prefix="xom-bench-cache-")
        for name, cmd, _goal, _cold, _n in startup_progs(quick):
            # The target is for ffmpeg; the many-object program stands in.
            big = name.startswith(("many", "ffmpeg"))
            protection_calls(cmd, cache)       # warms the cache
            n, nx, ne = lookup_calls(cmd, cache)
            row(f"system calls of the plan lookup, `{name}` (all calls: xom {nx}, "
                f"empty preload {ne})", str(n), "<= 2" if big else "",
                (n <= 2) if big else None)
            head.append(f"{name}: {n} lookup calls")
        shutil.rmtree(cache, ignore_errors=True)
    else:
        row("system calls of the plan lookup", "not measured (no runtime or no strace)", "<= 2", None)
    dl = None
    if runtime_built() and os.path.exists(DLOOP) and os.path.exists(MANY):
        dl, objects = dlopen_speed(3 if quick else 9, 5 if quick else 15, 20 if quick else 100)
        (rp, cp), (rx, cx) = dl["plain"], dl["xom"]
        rr, cr = dl["repeat"], dl["cycle"]
        n = 3 if quick else 9
        row(f"repeated `dlopen` of a loaded library, {objects} objects loaded: xom / without "
            f"(medians {rx / 1e3:.2f} / {rp / 1e3:.2f} µs; {n} pairs of processes, "
            f"ratios {rr[1]:.2f}-{rr[2]:.2f})", fmt_ratio(rr[0]), "<= 1.5", rr[0] <= 1.5)
        row(f"load/unload cycle, {objects} objects loaded: xom / without "
            f"(medians {cx / 1e3:.1f} / {cp / 1e3:.1f} µs; {n} pairs of processes, "
            f"ratios {cr[1]:.2f}-{cr[2]:.2f})", fmt_ratio(cr[0]), "<= 1.2", cr[0] <= 1.2)
        head.append(f"dlopen repeated {rr[0]:.2f}x, load/unload {cr[0]:.2f}x")
    else:
        row("dlopen with many objects loaded", "not measured (no runtime or no dlopen_loop)", "", None)
    counted = {}
    if runtime_built() and os.path.exists(DCYCLE) and shutil.which("valgrind") and have_strace:
        for objects in ((10, 500) if quick else (10, 100, 500)):
            c = cycle_counts(objects)
            if c:
                counted[objects] = c
    if 10 in counted and 500 in counted:
        extra = {n: c[1] - c[0] for n, c in counted.items()}
        spread = extra[500] / extra[10] - 1
        row("load/unload cycle of a new library: xom's extra instructions per cycle, "
            + ", ".join(f"{extra[n] / 1e3:.1f}k at {n}" for n in sorted(extra))
            + " objects loaded (from 10 to 500)", f"{spread * 100:+.1f}%", "within ±10%",
            abs(spread) <= 0.10)
        p500, x500 = counted[500][0], counted[500][1]
        row(f"load/unload cycle, 500 objects loaded: instructions, xom / without "
            f"({x500 / 1e3:.1f}k / {p500 / 1e3:.1f}k)", f"{x500 / p500:.3f}", "<= 1.15",
            x500 / p500 <= 1.15)
        calls = max(c[3] - c[2] for c in counted.values())
        row("load/unload cycle: xom's extra system calls per cycle (most over the sizes; "
            "without xom " + ", ".join(f"{counted[n][2]:.0f}" for n in sorted(counted)) + ")",
            f"{calls:.1f}", "<= 4", calls <= 4)
        head.append(f"cycle: +{extra[10] / 1e3:.1f}k/+{extra[500] / 1e3:.1f}k instructions "
                    f"at 10/500 objects, {x500 / p500:.3f}x, +{calls:.0f} calls")
    else:
        row("load/unload cycle, instructions and system calls",
            "not measured (no runtime, dlopen_cycle, valgrind or strace)", "", None)
    wl = warm_lookups() if runtime_built() and shutil.which("valgrind") else {}
    if wl.get("user"):
        us, up = wl["user"]
        ss, sp = wl.get("system") or (None, None)
        row(f"warm start of `many` ({MANY_N} libraries): store lookups from the user's cache, "
            f"sets / plans one by one (from the system store: "
            + (f"{ss} / {sp}" if ss is not None else "not measured (needs root)") + ")",
            f"{us} / {up}", "as from the system store",
            None if ss is None else up <= sp)
        head.append(f"warm lookups: user {us}/{up}, system "
                    + (f"{ss}/{sp}" if ss is not None else "n/a"))
    ex = exclude_costs() if runtime_built() and shutil.which("valgrind") else None
    if ex:
        pp, lp, n = ex
        row(f"exclude patterns: instructions per pattern and object, 16 patterns that match "
            f"none of `many`'s {n} objects (the lookup pass, without patterns: "
            f"{lp:.0f} per object)", f"{pp:.0f}", "<= the lookup per object", pp <= lp)
        head.append(f"exclude: {pp:.0f} instructions a pattern per object, lookup {lp:.0f}")
    else:
        row("exclude patterns: instructions per pattern and object",
            "not measured (no runtime or valgrind)", "<= the lookup per object", None)
    if not quick:
        cores = os.cpu_count()
        t = cold_ffmpeg()
        row(f"cold `ffmpeg -version`: empty cache, no store, {cores} cores (one run, seconds)",
            f"{t:.2f}" if t else "not measured (no ffmpeg or no runtime)", "<= 6 on 2 cores",
            None if t is None or cores != 2 else t <= 6)
        sbs = system_build() or {}
        sb, again = sbs.get("first"), sbs.get("again")
        row(f"`xom cache build --system` into an empty store, {cores} cores"
            + (f" ({sb[1]} files, seconds)" if sb else ""),
            f"{sb[0]:.1f}" if sb else "not measured (needs root)", "<= 45 on 2 cores",
            None if sb is None or cores != 2 else sb[0] <= 45)
        # The same build on the store it made, which is current: what the
        # package's trigger costs after a dpkg run that changed nothing.
        what = "`xom cache build --system` on a current store"
        if again:
            t, cpu, listed, unchanged = again
            row(f"{what}: wall seconds, {cores} cores", f"{t:.2f}", "<= 2 on 2 cores",
                None if cores != 2 else t <= 2)
            row(f"{what}: CPU seconds", f"{cpu:.2f}", "<= 1", cpu <= 1)
            row(f"{what}: listings started ({unchanged} start-ups unchanged)", str(listed),
                "0", listed == 0)
            head.append(f"current system store rebuilt in {t:.2f} s, {cpu:.2f} s CPU, "
                        f"{listed} listings")
        else:
            row(what, "not measured (needs root)", "<= 2 s, <= 1 s CPU, 0 listings", None)
        oc = one_library_changed()
        what = "`xom cache build` after one library changed"
        if oc:
            t0, l0 = oc["unchanged"]
            t1, l1, u1 = oc["changed"]
            row(f"{what}: start-ups listed, of {oc['programs']} programs, 2 of which load it "
                f"({u1} unchanged; {t1:.2f} s, against {t0:.2f} s with nothing changed "
                f"and {l0} listed)", str(l1), "2", l1 == 2 and l0 == 0)
            head.append(f"one library changed: {l1} of {oc['programs']} start-ups listed")
        else:
            row(what, "not measured (no xom or no C compiler)", "only the programs that load it", None)
    files = ([f"{LIBDIR}/libz.so.1"] if quick else
             [f"{LIBDIR}/libc.so.6", f"{LIBDIR}/libcrypto.so.3", DEBIAN_PY])
    ir = scan_instructions(files) if shutil.which("valgrind") else {}
    for name, (si, di, qi, r, qr) in ir.items():
        quiet = (f"against the decode with its printer off too, {qi / 1e6:.0f}M: {qr:.3f}"
                 if qi else "this Capstone's printer cannot be turned off")
        row(f"scanner instructions, `{name}`: xom-scan / bare Capstone detail decode "
            f"({si / 1e6:.0f}M / {di / 1e6:.0f}M; {quiet})", f"{r:.3f}", "<= 1.05", r <= 1.05)
    if ir:
        head.append("scanner/Capstone instructions " + ", ".join(
            f"{k} {v[3]:.3f}" + (f" ({v[4]:.3f} printer off)" if v[2] else "")
            for k, v in ir.items()))
    if not quick:
        row("scanner instructions, `libLLVM-15.so.1`", "not measured here (callgrind takes too "
            "long for `make bench`; `bench/scan_ratio.sh` measures it)", "<= 1.05", None)
    md = ("## 2b. The start-up floor and dlopen: targets\n\n"
          "Each figure beside its target.  Start-up ratios are the medians of\n"
          "section 2 (interleaved runs against an empty preload, `backend=none`,\n"
          "plan cache warm); beside them, as a figure that does not depend on the\n"
          "machine's load, callgrind's count of the instructions each run executes\n"
          "in user space (system calls and page faults are not in it: the wall-time\n"
          "ratio is the one the targets are for).  System calls are counted with `strace -f` in one warm\n"
          "run: the plan lookup is every call on a store's index file (its opens,\n"
          "found or not, the lstat that checks a kept one, and the fstat, mmap,\n"
          "close and munmap of what was opened).\n"
          "`dlopen` figures come from `bench/dlopen_loop`, which loads the\n"
          f"{MANY_N} libraries of `bench/gen_many.sh` and then times a `dlopen` of one\n"
          "of them and a `dlopen`/`dlclose` cycle of one more, per operation, median\n"
          "over rounds; the ratio is the median over pairs of processes run in\n"
          "turn with and without xom, and the range of the pairs' ratios says how\n"
          "noisy the machine was.\n"
          "Scanner instructions are callgrind's counts (`bench/scan_ratio.sh`) of\n"
          "`xom-scan --json FILE` against a bare Capstone detail decode of the same\n"
          "bytes (`capstone_decode FILE`, which formats each instruction as text as\n"
          "Capstone does by default), and beside it against the same decode with\n"
          "the printer off (`capstone_decode -q`), the Capstone calls the\n"
          "scanner's sweep makes.\n\n")
    md += table(["measure", "figure", "target", ""], rows)
    return md, head


# ---- 3. Coverage across the system -------------------------------------------

CODE_READ = ("rip-load", "table", "absolute")
HEADERS = ("header", "section")
WHOLE = ("textrel", "writable", "nosections")
# A page's strongest reason: a non-code section sharing the page explains it
# before the reads that land there, so "code reads data here" means data
# inside the code sections themselves.
PRIORITY = WHOLE + HEADERS + CODE_READ + ("outside",)


def elf_kind(path, under_bin):
    """'x86-64' for an ELF file in scope, 'other-elf', or None (not ELF)."""
    try:
        with open(path, "rb") as fh:
            h = fh.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    etype, machine = struct.unpack("<HH", h[16:20])
    if h[4] != 2 or machine != 62:
        return "other-elf"
    if under_bin:
        return "x86-64" if etype in (2, 3) else None
    name = os.path.basename(path)
    return "x86-64" if etype == 3 and ".so" in name else None


def list_system_files():
    """Shared objects under /usr/lib and /lib, programs in /usr/bin, deduped."""
    seen, files, other = set(), [], 0
    for top, under_bin in (("/usr/bin", True), ("/usr/lib", False), ("/lib", False)):
        for d, _dirs, names in os.walk(top):
            for nm in names:
                p = os.path.join(d, nm)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if not (st.st_mode & 0o170000 == 0o100000):
                    continue
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    continue
                seen.add(key)
                k = elf_kind(p, under_bin)
                if k == "other-elf":
                    other += 1
                elif k:
                    files.append((st.st_size, p))
    return files, other


def exec_section_pages(path):
    """Pages overlapping an SHF_EXECINSTR section: what a section-level tool
    (XOM-Switch, 2018) makes execute-only without looking at the code."""
    pages = set()
    try:
        with open(path, "rb") as fh:
            eh = fh.read(64)
            shoff, = struct.unpack("<Q", eh[40:48])
            shentsize, shnum = struct.unpack("<HH", eh[58:62])
            if shoff == 0 or shentsize != 64:
                return pages
            fh.seek(shoff)
            raw = fh.read(64 * shnum)
    except (OSError, struct.error):
        return pages
    for i in range(len(raw) // 64):
        _name, stype, flags, addr, _off, size = struct.unpack("<IIQQQQ", raw[i * 64:i * 64 + 40])
        if stype == 1 and flags & 0x4 and size:
            pages.update(range(addr // PAGE, (addr + size - 1) // PAGE + 1))
    return pages


def separate_code(path):
    """True when no executable PT_LOAD holds the ELF header, as ld's
    -z separate-code lays files out: then the readable pages xom leaves
    are code pages it could not prove pure, not .rodata and headers."""
    try:
        with open(path, "rb") as fh:
            eh = fh.read(64)
            phoff, = struct.unpack("<Q", eh[32:40])
            phentsize, phnum = struct.unpack("<HH", eh[54:58])
            if phentsize != 56:
                return False
            fh.seek(phoff)
            raw = fh.read(56 * phnum)
    except (OSError, struct.error):
        return False
    for i in range(len(raw) // 56):
        ptype, flags, off = struct.unpack("<IIQ", raw[i * 56:i * 56 + 16])
        if ptype == 1 and flags & 1 and off == 0:
            return False
    return True


def scan_one(path, timeout):
    """Scans one file in its own process, so a crash or hang is one result."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([XOMSCAN, "--json", path], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"file": path, "error": f"timeout after {timeout} s"}
    dt = time.monotonic() - t0
    if p.returncode < 0:
        return {"file": path, "error": f"scanner killed by signal {-p.returncode}"}
    if p.returncode != 0:
        msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
        msg = msg.split(": ", 1)[-1] if msg.startswith(path) else msg
        return {"file": path, "error": msg, "rc": p.returncode}
    try:
        j = json.loads(p.stdout.splitlines()[0])
    except (ValueError, IndexError):
        return {"file": path, "error": "output is not one JSON object"}
    readable = set()
    for s, e in j["readable"]:
        readable.update(range(s // PAGE, (e + PAGE - 1) // PAGE))
    reasons = {}
    for d in j["data"]:
        for pg in range(d["start"] // PAGE, (max(d["end"], d["start"] + 1) + PAGE - 1) // PAGE):
            if pg in readable:
                reasons.setdefault(pg, set()).add(d["reason"])
    sect = exec_section_pages(path)
    why = {}
    for pg in readable:
        rs = reasons.get(pg, {"unexplained"})
        r = next((x for x in PRIORITY if x in rs), "unexplained")
        why[r] = why.get(r, 0) + 1
    whole = any(r in WHOLE for rs in reasons.values() for r in rs)
    # Pages that code certainly reads: every page of a RIP-relative operand,
    # and the page of each table base or absolute target.  A table's extent
    # beyond its base is the scanner's safe guess, so pages that only the
    # extent covers give the upper bound.
    certain = set()
    for d in j["data"]:
        if d["reason"] == "rip-load":
            certain.update(range(d["start"] // PAGE, (max(d["end"], d["start"] + 1) + PAGE - 1) // PAGE))
        elif d["reason"] in ("table", "absolute"):
            certain.add(d["start"] // PAGE)
    code_read = set(CODE_READ)
    crash_code = sum(1 for pg in sect if pg in readable and pg in certain)
    crash_upper = sum(1 for pg in sect if pg in readable and reasons.get(pg, set()) & code_read)
    crash_hdr = sum(1 for pg in sect if pg in readable and pg not in certain
                    and not reasons.get(pg, set()) & code_read
                    and reasons.get(pg, set()) & set(HEADERS))
    return {"file": path, "exec": j["exec_pages"], "xom": j["xom_pages"],
            "why": why, "sect": len(sect), "crash_code": 0 if whole else crash_code,
            "crash_upper": 0 if whole else crash_upper,
            "crash_hdr": 0 if whole else crash_hdr, "whole": whole, "secs": dt,
            "gadgets": len(j["gadgets"]), "rbytes": j["readable_bytes"],
            "rets": j["ret_gadgets"], "sect_rbytes": j["section_level"]["readable_bytes"],
            "sect_rets": j["section_level"]["ret_gadgets"], "sep": separate_code(path)}


def coverage(quick, budget_s, out):
    t0 = time.monotonic()
    if quick:
        cands = [f"{LIBDIR}/libc.so.6", f"{LIBDIR}/libm.so.6", f"{LIBDIR}/libz.so.1",
                 f"{LIBDIR}/libcrypto.so.3", "/usr/bin/true", "/usr/bin/ls",
                 DEBIAN_PY, "/etc/passwd"]
        files = [(os.path.getsize(p), p) for p in cands
                 if os.path.exists(p) and elf_kind(p, p.startswith("/usr/bin")) == "x86-64"]
        other = 0
        scope = "a fixed subset of " + str(len(files)) + " files (quick run)"
    else:
        files, other = list_system_files()
        scope = ("every x86-64 ELF shared object (`*.so*`, ET_DYN) under /usr/lib and /lib "
                 "and every x86-64 ELF program in /usr/bin, deduplicated by inode")
    list_s = time.monotonic() - t0
    # Largest first: the long scans start early, so the two workers finish
    # together, and if the time cap is hit it is small files that are left.
    files.sort(reverse=True)
    deadline = time.monotonic() + budget_s
    results, unreached = [], []

    def task(p):
        if time.monotonic() > deadline:
            unreached.append(p)
            return None
        return scan_one(p, timeout=120)

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        for r in ex.map(task, [p for _s, p in files]):
            if r:
                results.append(r)
    scan_s = time.monotonic() - t0 - list_s
    ok = [r for r in results if "error" not in r]
    bad = [r for r in results if "error" in r]

    tot = {k: sum(r[k] for r in ok)
           for k in ("exec", "xom", "sect", "crash_code", "crash_upper", "crash_hdr",
                     "rbytes", "rets", "sect_rbytes", "sect_rets")}
    why = {}
    for r in ok:
        for k, v in r["why"].items():
            why[k] = why.get(k, 0) + v
    crash_files = [r for r in ok if r["crash_code"] + r["crash_hdr"] > 0]
    whole_files = [r for r in ok if r["whole"]]
    none_files = [r for r in ok if r["exec"] and not r["xom"]]
    skip_lost = sum(r["sect"] for r in crash_files)
    skip_cov = tot["sect"] - skip_lost
    pct = (lambda a, b: f"{100.0 * a / b:.1f}%" if b else "n/a")

    md = ("## 3. Coverage across the system\n\n"
          f"Scope: {scope}; {len(files)} files ({other} ELF files for other machines "
          f"left out), {len(ok)} analysed, {len(bad)} could not be analysed"
          + (f", {len(unreached)} not reached within the {budget_s} s cap" if unreached else "")
          + f".  Listing took {list_s:.0f} s, scanning {scan_s:.0f} s on two workers.\n\n"
          "The section-level method is the one earlier user-space tools used\n"
          "(XOM-Switch, 2018): every page of an SHF_EXECINSTR section made execute-only,\n"
          "with no analysis.  A page it would make unreadable although code reads it\n"
          "(our scan found a RIP-relative load, a table base or an absolute address\n"
          "into it, or a header or non-code section shares it) is a crash waiting to\n"
          "happen; the upper bound adds the pages that a table's extent (up to the\n"
          "next known function entry) covers, where the scanner cannot tell how far\n"
          "the table runs.  The skip-list row is what that method keeps if every file with at\n"
          "least one such page is left out entirely, as its hand-written list did.\n\n")
    rows = [["executable pages", tot["exec"], "100%"],
            ["**execute-only with xom**", tot["xom"], f"**{pct(tot['xom'], tot['exec'])}**"],
            ["kept readable by xom", tot["exec"] - tot["xom"], pct(tot["exec"] - tot["xom"], tot["exec"])],
            ["section-level method: pages made execute-only", tot["sect"], pct(tot["sect"], tot["exec"])],
            ["... of which code certainly reads data on them (crash)", tot["crash_code"],
             pct(tot["crash_code"], tot["exec"])],
            ["... of which code may read data on them (upper bound: table extents)",
             tot["crash_upper"], pct(tot["crash_upper"], tot["exec"])],
            ["... of which headers or non-code sections share them (crash)", tot["crash_hdr"],
             pct(tot["crash_hdr"], tot["exec"])],
            [f"files with at least one such page", len(crash_files), pct(len(crash_files), len(ok)) + " of files"],
            ["section-level method with those files skipped: pages execute-only", skip_cov,
             pct(skip_cov, tot["exec"])],
            ["coverage the skip-list gives up (pages)", skip_lost, pct(skip_lost, tot["exec"])],
            ["files kept wholly readable by xom (text relocations, W+X, no sections)",
             len(whole_files), ""],
            ["files where xom makes no page execute-only", len(none_files),
             pct(sum(r["exec"] for r in none_files), tot["exec"])]]
    md += table(["", "pages / files", "share of executable pages"], rows)
    md += ("\nThe share by layout.  In files linked with `-z separate-code` (Debian's\n"
           "default since binutils 2.31) the executable segment holds only the\n"
           "executable sections, so a page xom keeps readable is code it could not\n"
           "prove pure; in older files the segment also holds headers and `.rodata`,\n"
           "which must stay readable under any method.\n\n")
    lrows = []
    for name, sep in (("`-z separate-code`", True), ("without it", False)):
        fs = [r for r in ok if r["sep"] == sep]
        e, x = sum(r["exec"] for r in fs), sum(r["xom"] for r in fs)
        lrows.append([name, len(fs), e, x, pct(x, e)])
    md += table(["files linked", "files", "executable pages", "execute-only with xom", "share"],
                lrows)
    mb = lambda n: f"{n / 1e6:.1f} MB"
    md += ("\nWhat an attacker who can read memory still harvests: the executable\n"
           "bytes left readable, and the ret gadget candidates among them (a `c3`\n"
           "byte that 1 to 15 bytes before it complete as whole instructions, none a\n"
           "branch; `xom-scan --json`, `readable_bytes`, `ret_gadgets` and their\n"
           "`section_level` counterparts).  The section-level method leaves less\n"
           "readable because it also makes the code pages that hold data\n"
           "execute-only, and those are the pages it crashes on.\n\n")
    md += table(["", "readable executable bytes", "ret gadget candidates"],
                [["xom", f"{tot['rbytes']:,} ({mb(tot['rbytes'])})", f"{tot['rets']:,}"],
                 ["section-level method", f"{tot['sect_rbytes']:,} ({mb(tot['sect_rbytes'])})",
                  f"{tot['sect_rets']:,}"]])
    if none_files:
        md += ("\nLargest files where xom makes no page execute-only: "
               + ", ".join(f"{os.path.basename(r['file'])} ({r['exec']} pages)"
                           for r in sorted(none_files, key=lambda r: -r["exec"])[:8]) + ".\n")
    md += "\nWhy xom keeps pages readable (one reason per page, the strongest):\n\n"
    md += table(["reason", "pages", "share of readable pages"],
                [[k, v, pct(v, tot["exec"] - tot["xom"])]
                 for k, v in sorted(why.items(), key=lambda kv: -kv[1])])
    if bad:
        errs = {}
        for r in bad:
            errs.setdefault(r["error"], []).append(r["file"])
        md += "\nFiles that could not be analysed, by reason:\n\n"
        md += table(["reason", "files", "examples"],
                    [[k.replace("|", "/"), len(v), ", ".join(os.path.basename(x) for x in v[:3])]
                     for k, v in sorted(errs.items(), key=lambda kv: -len(kv[1]))])
    worst = sorted(crash_files, key=lambda r: -(r["crash_code"] + r["crash_hdr"]))[:15]
    if worst:
        md += ("\nFiles where the section-level method would make the most code-read\n"
               "pages unreadable:\n\n")
        md += table(["file", "exec pages", "xom pages", "crash pages (certain)",
                     "crash pages (upper bound)", "crash pages (headers/sections)"],
                    [[os.path.basename(r["file"]), r["exec"], r["xom"], r["crash_code"], r["crash_upper"],
                      r["crash_hdr"]] for r in worst])
    slow = sorted(ok, key=lambda r: -r["secs"])[:5]
    md += "\nSlowest scans: " + ", ".join(f"{os.path.basename(r['file'])} {r['secs']:.1f} s"
                                           for r in slow) + "\n\n"
    plot_md = coverage_plot(ok, out)
    md += plot_md
    # The per-file table names every file on the machine: a build product,
    # not part of the committed report.
    os.makedirs(os.path.join(B, "bench"), exist_ok=True)
    with open(os.path.join(B, "bench", "coverage.tsv"), "w") as fh:
        fh.write("file\texec_pages\txom_pages\tsection_pages\tcrash_certain\tcrash_upper"
                 "\tcrash_hdr\twhole\terror\n")
        for r in results:
            fh.write("\t".join(str(r.get(k, "")) for k in
                               ("file", "exec", "xom", "sect", "crash_code", "crash_upper", "crash_hdr",
                                "whole", "error")) + "\n")
    head = (tot["xom"], tot["exec"], tot["crash_code"] + tot["crash_hdr"], len(crash_files),
            skip_lost, len(ok), len(bad), len(unreached))
    return md, head


def coverage_plot(ok, out):
    libs = [r for r in ok if ".so" in os.path.basename(r["file"])]
    libs = sorted(libs, key=lambda r: -r["exec"])[:40]
    if not libs or not shutil.which("gnuplot"):
        return "(no plot: gnuplot is missing or no library was analysed)\n\n"
    dat = os.path.join(B, "bench", "coverage.dat")
    with open(dat, "w") as fh:
        fh.write("# name xom% readable-by-code% readable-headers% whole% section-crash%\n")
        for r in libs:
            e = max(r["exec"], 1)
            w = r["why"]
            code = sum(w.get(k, 0) for k in CODE_READ)
            whole = sum(w.get(k, 0) for k in WHOLE)
            other = r["exec"] - r["xom"] - code - whole
            name = re.sub(r"\.so.*", "", os.path.basename(r["file"]))
            fh.write(f"{name} {100 * r['xom'] / e:.2f} {100 * code / e:.2f} "
                     f"{100 * other / e:.2f} {100 * whole / e:.2f} "
                     f"{100 * (r['crash_code'] + r['crash_hdr']) / e:.2f}\n")
    err = plot_dat(dat, os.path.join(out, "coverage.png"), len(libs))
    if err:
        return f"(no plot: gnuplot failed: {err})\n\n"
    return ("![coverage per library](coverage.png)\n\n"
            "`coverage.png`: one bar per library, green the share of its executable\n"
            "pages that xom makes execute-only; black dots, the share that the\n"
            "section-level method would make unreadable although code certainly\n"
            "reads them.\n\n")


def plot_dat(dat, png, nlibs):
    """Draws the coverage plot from its data file; returns an error or ''."""
    script = f"""
set terminal png size 1300,760 font ",10"
set termoption noenhanced
set output "{png}"
set title "xom coverage of the {nlibs} largest shared objects (by executable pages): share of executable pages"
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border -1
set boxwidth 0.8
set yrange [0:105]
set ylabel "% of executable pages"
set xtics rotate by 60 right nomirror
set key below horizontal
set grid ytics
plot "{dat}" using 2:xtic(1) title "execute-only (xom)" lc rgb "#2e8b57", \\
     "" using 3 title "readable: code reads data here" lc rgb "#d62728", \\
     "" using 4 title "readable: headers, non-code sections" lc rgb "#ff9f1c", \\
     "" using 5 title "readable: whole file (textrel/W+X)" lc rgb "#7f7f7f", \\
     "" using 0:6 with points pt 7 ps 1.2 lc rgb "black" title "section-level method: made unreadable, certainly read by code"
"""
    p = subprocess.run(["gnuplot"], input=script, capture_output=True, text=True)
    return p.stderr.strip()[:200] if p.returncode != 0 else ""


# ---- 4. Run time in the emulated-PKU guest -----------------------------------

def runtime_vm(quick):
    md = ("## 4. Run time (emulated protection keys)\n\n"
          "CPU-bound work in the QEMU guest (TCG, `-cpu max`, which implements\n"
          "protection keys) with and without `LD_PRELOAD=libxom.so` in enforcing\n"
          "mode, alternating.  **Emulated timing supports ratios only**: TCG runs\n"
          "code tens of times slower than the hardware, and unevenly, so the\n"
          "absolute figures below say nothing about a real CPU.\n\n")
    if quick:
        return md + "Not run in the quick subset (booting the guest takes too long).\n\n", None
    if not runtime_built():
        return md + "**runtime not built**: no `libxom.so` in the build; nothing was measured.\n\n", None
    p = subprocess.run(["tests/vm/run", "--timeout", "400", "--", "sh",
                        "/xom/build/bench/vm_runtime.sh"], capture_output=True, text=True,
                       env=dict(os.environ, B=B))
    if p.stdout.startswith("SKIP"):
        return md + f"Skipped: {p.stdout.strip()}\n\n", None
    res = {}
    for line in p.stdout.splitlines():
        m = re.match(r"RESULT (\S+) (\S+) ([\d.]+) (\S+)", line)
        if m:
            res.setdefault(m.group(1), {}).setdefault(m.group(2), []).append(float(m.group(3)))
            res[m.group(1)]["unit"] = m.group(4)
    if not res:
        tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-8:])
        return md + f"The guest run gave no results (exit {p.returncode}):\n\n```\n{tail}\n```\n\n", None
    rows, ratios = [], []
    for wl, d in res.items():
        unit = d.pop("unit")
        if "plain" not in d or "xom" not in d:
            rows.append([wl, unit, "", "", "missing"])
            continue
        a = sorted(d["plain"])[len(d["plain"]) // 2]
        x = sorted(d["xom"])[len(d["xom"]) // 2]
        # Throughput is higher-is-better, seconds lower-is-better; the ratio
        # is always "time with xom / time without".
        r = a / x if unit.endswith("/s") else x / a
        ratios.append(r)
        rows.append([wl, unit, f"{a:.3g} ({min(d['plain']):.3g}-{max(d['plain']):.3g})",
                      f"{x:.3g} ({min(d['xom']):.3g}-{max(d['xom']):.3g})", len(d["xom"]),
                      f"**{r:.3f}**"])
    md += table(["workload", "unit", "without xom: median (range)", "with xom: median (range)",
                 "runs each", "time ratio xom / plain"], rows)
    md += ("\nA ratio inside the spread of the runs is no difference: the guest's\n"
           "timing varies by tens of percent from run to run.\n")
    notes = [l for l in p.stdout.splitlines() if l.startswith("NOTE")]
    if notes:
        md += "\n" + "\n".join("- " + l[5:] for l in notes) + "\n"
    return md + "\n", ratios


# ---- 5. Scale ------------------------------------------------------------------

def synth_file(n_funcs, d):
    """A shared object with n_funcs generated functions, built at -O1."""
    src = os.path.join(d, f"synth{n_funcs}.c")
    so = os.path.join(d, f"synth{n_funcs}.so")
    subprocess.run(["sh", "bench/gen_synth.sh", str(n_funcs), src], check=True)
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", so, src], check=True)
    return so


def scale(quick, out):
    d = tempfile.mkdtemp(prefix="xom-bench-scale-")
    files = []
    for n in ((20, 200) if quick else (20, 200, 2000)):
        try:
            files.append(("synthetic, %d functions" % n, synth_file(n, d)))
        except (subprocess.CalledProcessError, OSError) as e:
            log(f"bench: cannot build the synthetic file: {e}")
    real = [f"{LIBDIR}/libz.so.1", f"{LIBDIR}/libc.so.6", DEBIAN_PY]
    if not quick:
        # Larger real files where the machine has them, up to tens of MB.
        # Larger real files where the machine has them: the first of each
        # group that exists, so a machine with several versions scans one.
        for group in ([f"{LIBDIR}/libx265.so.199", "/usr/bin/node"],
                      [f"{LIBDIR}/libLLVM-15.so.1", f"{LIBDIR}/libLLVM-14.so.1"]):
            real += [next((g for g in group if os.path.exists(g)), "")]
    for f in real:
        if f and os.path.exists(f):
            files.append((os.path.basename(f), f))
    rows, per = [], []
    for name, f in files:
        # Big files are scanned once: a 30 MB file takes seconds per scan.
        big = os.path.getsize(f) > 20e6
        reps = 1 if quick or big else 3
        p = subprocess.run([SCANT, "-r", str(reps), f], capture_output=True, text=True)
        m = re.search(r"code_bytes=(\d+) best_s=([\d.]+)", p.stdout)
        if not m:
            continue
        cb, s = int(m.group(1)), float(m.group(2))
        t = run_timed([f"scan:{XOMSCAN} {f}", f"capstone:{CSDEC} {f}"], reps, warmup=0)
        rss = t["scan"]["maxrss_kb"] / 1024
        per.append((cb, s, rss))
        rows.append([name, f"{cb / 1e3:,.0f}", f"{1e3 * s:.1f}", f"{1e9 * s / max(cb, 1):.0f}",
                     f"{t['scan']['median_us'] / max(t['capstone']['median_us'], 1):.2f}",
                     f"{rss:.1f}", f"{rss / max(cb / 1e6, 1e-9):.1f}"])
    shutil.rmtree(d, ignore_errors=True)
    rows.sort(key=lambda r: float(r[1].replace(",", "")))
    # Marginal memory: what each MB of code adds above the smallest file.
    marg = None
    if len(per) >= 2:
        per.sort()
        (c0, _s0, r0), (c1, _s1, r1) = per[0], per[-1]
        if c1 > c0:
            marg = (r1 - r0) / ((c1 - c0) / 1e6)
    md = ("## 5. Scale\n\n"
          "Scan time and peak memory against code size: generated shared objects\n"
          "(`bench/gen_synth.sh`, gcc -O1) and real files of increasing size.  Time is\n"
          "the in-process scan (`scan_time`, best run); the ratio to Capstone and the\n"
          "peak RSS are whole-process runs of `xom-scan` and `capstone_decode`.\n"
          "Time per MB should be flat.\n\n")
    md += table(["file", "code KB", "scan ms", "ms per MB of code", "xom-scan / Capstone",
                 "peak RSS MB", "peak RSS MB per MB of code"], rows)
    # Below ~100 KB of code, process and library set-up dominate the time.
    flat = [1e9 * s_ / cb for cb, s_, _r in per if cb >= 1e5]
    if marg is not None:
        md += f"\nMarginal peak memory, smallest to largest file: **{marg:.1f} MB per MB of code**.\n"
    if len(flat) >= 2:
        md += (f"Time per MB of code, files of 100 KB of code or more: {min(flat):.0f} to "
               f"{max(flat):.0f} ms (max / min **{max(flat) / min(flat):.2f}**).\n")
    return md + "\n", (marg, (min(flat), max(flat)) if len(flat) >= 2 else None)


# ---- The report ------------------------------------------------------------------

def git(*args):
    """git's output, stripped; "" where git is missing or fails."""
    try:
        p = subprocess.run(["git", *args], capture_output=True, text=True)
    except OSError:
        return ""
    return p.stdout.strip() if p.returncode == 0 else ""


def write_report(args):
    os.makedirs(args.out, exist_ok=True)
    full = args.full
    t0 = time.monotonic()
    parts, headline = [], []
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    # BENCH_REV names the commit when the run is made from an export of it
    # (a clean tree without git metadata).  Without git, or outside a
    # checkout, the report says that it does not know the revision.
    rev = os.environ.get("BENCH_REV") or git("rev-parse", "--short", "HEAD")
    if rev:
        rev = "commit " + rev
        # The figures describe the code that was built, which may be ahead
        # of the commit: say so rather than credit the commit with them.
        dirty = git("status", "--porcelain", "--untracked-files=no", "--",
                    "scan", "loader", "preload").split("\n")
        dirty = sorted({l[3:].split("/")[0] for l in dirty if l.strip()})
        if dirty:
            rev += " (with uncommitted changes in " + ", ".join(d + "/" for d in dirty) + ")"
    else:
        rev = "an unknown revision (no git, or not a checkout)"

    log("bench: scan speed")
    md, heads = scan_speed(SPEED_FILES if full else SPEED_FILES[:1], 9 if full else 3,
                           5 if full else 1)
    parts.append(md)
    for name, r, od, mbs in heads:
        headline.append(f"scan {name}: {mbs:.1f} MB/s, xom-scan/Capstone {r:.2f} "
                        f"(goal <= 1.25), objdump/xom-scan {od:.2f}")
    md, h = warm_cache_speed(11 if full else 3)
    parts.append(md)
    headline.append("plan cache (libcrypto via dlopen): " + (
        "runtime not built" if h is None else
        f"warm adds {h[0]:+.2f} ms, cold adds {h[1]:.0f} ms to an empty preload "
        f"(cold/warm {h[2]:.0f}x)"))

    log("bench: start-up")
    md, heads = startup(101 if full else 5, 31 if full else 3, not full)
    parts.append(md)
    for name, (rw, rc, calls, _best, _pe) in heads.items():
        headline.append(f"start-up {name}: warm/empty-preload "
                        + ("runtime not built" if rw is None else
                           f"{rw:.3f}, " + (f"cold/empty {rc:.2f}, " if rc else "")
                           + f"protection calls {calls}"))

    log("bench: start-up and dlopen targets")
    md, h = targets(not full, {k: v for k, v in heads.items()})
    parts.append(md)
    headline.append("targets: " + "; ".join(h))

    log("bench: coverage")
    md, h = coverage(not full, 330 if full else 30, args.out)
    parts.append(md)
    xom, ex, crash, cfiles, lost, nok, nbad, nun = h
    headline.append(f"coverage: {xom}/{ex} exec pages execute-only "
                    f"({100.0 * xom / max(ex, 1):.1f}%) over {nok} files, {nbad} not analysable"
                    + (f", {nun} not reached" if nun else "")
                    + f"; section-level method: {crash} crash pages in {cfiles} files, "
                    f"skip-list gives up {lost} pages ({100.0 * lost / max(ex, 1):.1f}%)")

    log("bench: run time in the emulated-PKU guest")
    md, ratios = runtime_vm(not full)
    parts.append(md)
    headline.append("run time (emulated PKU): " + (
        "not measured" if not ratios else
        "time xom/plain " + ", ".join(f"{r:.3f}" for r in ratios)
        + " (sha256, aes-128-cbc, Python loop; emulated, ratios only, run-to-run spread tens of %)"))

    log("bench: scale")
    md, (marg, flat) = scale(not full, args.out)
    parts.append(md)
    if marg is not None:
        headline.append(f"scale: marginal peak memory {marg:.1f} MB per MB of code"
                        + (f"; scan time {flat[0]:.0f}-{flat[1]:.0f} ms per MB of code"
                           if flat else ""))

    total = time.monotonic() - t0
    head = ("# xom benchmark results\n\n"
            f"{'Full run (`make bench`)' if full else 'Quick subset (`make bench-quick`)'}"
            f" of {rev}, {when}, {total:.0f} s in all, on a shared\n"
            f"{os.cpu_count()}-CPU virtual machine ({cpu}, Linux {platform.release()}) "
            "whose CPU does not expose\nprotection keys.  These numbers are a snapshot: "
            "rerun `make bench` to refresh them.\nEvery ratio's baseline was measured "
            "in the same run, interleaved with it.\n\n"
            "## Headline\n\n" + "".join(f"- {h}\n" for h in headline) + "\n")
    with open(os.path.join(args.out, "results.md"), "w") as fh:
        fh.write(head + "\n".join(parts))
    print("\n".join(headline))
    print(f"bench: wrote {os.path.join(args.out, 'results.md')} in {total:.0f} s")


# ---- The well-formedness check -----------------------------------------------------

def check(d):
    """Checks the report's shape, never a time: timings are too noisy here."""
    passed = failed = 0

    def ok(name, cond):
        nonlocal passed, failed
        if cond:
            passed += 1
            print(f"PASS {name}")
        else:
            failed += 1
            print(f"FAIL {name}")

    path = os.path.join(d, "results.md")
    text = open(path).read() if os.path.exists(path) else ""
    ok("results.md exists", bool(text))
    for sec in ("## Headline", "## 1. Scan speed", "### Scan speed with the plan cache warm",
                "## 2. Start-up", "## 2b. The start-up floor and dlopen: targets",
                "## 3. Coverage across the system",
                "## 4. Run time (emulated protection keys)", "## 5. Scale"):
        ok(f"section '{sec}'", sec in text)
    ok("scan ratio is a number", re.search(r"\| libc\.so\.6 \| [\d.]+ \|.*\*\*[\d.]+\*\*", text))
    ok("start-up table has /bin/true", re.search(r"\| /bin/true \| [\d.]+ \| [\d.]+ \|", text))
    ok("start-up says runtime state", "runtime not built" in text
       or re.search(r"\| /bin/true \|( [^|]+ \|){6} \*\*[\d.]+\*\*", text))
    ok("targets table has the dlopen cycle", "runtime not built" in text
       or re.search(r"\| load/unload cycle, \d+ objects loaded[^|]*\| [\d.]+ \| <= 1.2 \| (\*\*met\*\*|not met) \|", text))
    ok("targets table counts the lookup's system calls", "runtime not built" in text
       or re.search(r"\| system calls of the plan lookup, `many[^|]*\| \d+ \| <= 2 \|", text))
    ok("targets table has a scanner instruction ratio",
       re.search(r"\| scanner instructions, `[^`]+`: [^|]*\| [\d.]+ \| <= 1.05 \|", text))
    ok("coverage counts pages", re.search(r"\*\*execute-only with xom\*\* \| \d+ \|", text))
    ok("attack surface has both methods",
       re.search(r"^\| xom \| [\d,]+ \([\d.]+ MB\) \| [\d,]+ \|$", text, re.M)
       and re.search(r"^\| section-level method \| [\d,]+ \([\d.]+ MB\) \| [\d,]+ \|$", text, re.M))
    ok("share by layout has both rows", re.search(r"^\| `-z separate-code` \| \d+ \|", text, re.M)
       and re.search(r"^\| without it \| \d+ \|", text, re.M))
    ok("coverage tsv written", os.path.exists(os.path.join(B, "bench", "coverage.tsv")))
    ok("plot written or its absence explained", os.path.exists(os.path.join(d, "coverage.png"))
       or "(no plot:" in text)
    ok("scale table has rows", len(re.findall(r"^\| synthetic, \d+ functions \|", text, re.M)) >= 1)
    ok("no NaN or error in the tables", "nan" not in text.lower().split() and "Traceback" not in text)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def main():
    ap = argparse.ArgumentParser()
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--full", action="store_true")
    g.add_argument("--quick", action="store_true")
    g.add_argument("--check", metavar="DIR")
    ap.add_argument("--out", default="bench")
    args = ap.parse_args()
    if args.check:
        sys.exit(check(args.check))
    # A private runtime folder: xom's fallback store lies there (or in
    # /tmp/xom-UID without one), and plans that an earlier run of xom left
    # in it would be found by the "cold" runs and the system-call counts.
    with tempfile.TemporaryDirectory(prefix="xom-bench-run-") as run:
        os.environ["XDG_RUNTIME_DIR"] = run
        write_report(args)


if __name__ == "__main__":
    main()
