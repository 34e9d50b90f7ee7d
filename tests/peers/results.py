"""Turns the results of a peer's test suite into one plain form, and compares
the three runs of tests/peers/native.sh (or the guest's run) case by case.

  results.py regrtest MODULE RC LOG XML   a regrtest run of one module
  results.py tap NAME RC TAP              a GLib test program's TAP output
  results.py compare PLAIN PRELOAD AUDIT  three folders of *.res files
  results.py module MODULE PLAIN PRELOAD AUDIT   regrtest and compare for
                                          one module (MODULE.rc, .log, .xml)

The plain form (a .res file) has one line per case, "CASE<TAB>OUTCOME"
(ok, skipped, failure, error, not ok), and first a line "*<TAB>STATUS": how
the whole program ended (its exit status, and for regrtest its verdict).
What a run prints beside its results (times, process ids, temporary
folders, random seeds) is left out, so that only what a test decided is
compared.

compare prints one line per test program, which the suite turns into its
result lines:
  pass NAME: DETAIL     the same status and the same outcome of every case
  skip NAME: REASON     the whole program skipped itself, alike in all runs
  fail NAME: DETAIL     anything differs; every differing case is named
and last a line "total ..." with the numbers of cases that ran in each run.
It runs under the plain interpreter, never under xom, and needs only the
standard library, so that the emulated-PKU guest runs it as it is.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

RUNS = ("plain", "preload", "audit")


def status_of(rc, log):
    """How a program ended: its exit status, and regrtest's verdict."""
    rc = int(rc)
    words = ["exit %d" % rc if rc < 128 else "signal %d" % (rc - 128)]
    verdict = re.findall(r"^== Tests result: (.*) ==$", log, re.M)
    if verdict:
        words.append(verdict[-1])
    return ", ".join(words)


def case_outcome(tc):
    # Only the elements that say what happened count; the captured output
    # (system-out, system-err) comes before them.
    for tag in ("error", "failure", "skipped"):
        if tc.find(tag) is not None:
            return tag
    return "ok"


def emit(lines, out):
    """Writes the cases, naming a repeated case name with #2, #3... so that
    a test that ran twice in one run and once in another differs."""
    seen = {}
    for name, outcome in lines:
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = "%s#%d" % (name, seen[name])
        out.write("%s\t%s\n" % (name, outcome))


def last_started(log):
    """The last case that regrtest's -v output shows begun: where a run that
    died of a signal stopped."""
    started = re.findall(r"^(\w+ \([\w.]+\))(?: \.\.\. |$)", log, re.M)
    return started[-1] if started else ""


def cmd_regrtest(module, rc, logpath, xmlpath, out=sys.stdout):
    log = read(logpath)
    status = status_of(rc, log)
    m = re.search(r"^%s skipped(?: -- (.*)| \((.*)\))$" % re.escape(module), log, re.M)
    if m:
        status += ", skipped: " + (m.group(1) or m.group(2))
    if status.startswith("signal"):
        where = last_started(log)
        if where:
            status += ", in " + where
    out.write("*\t%s\n" % status)
    cases = []
    if os.path.exists(xmlpath) and os.path.getsize(xmlpath):
        try:
            for tc in ET.parse(xmlpath).iter("testcase"):
                cases.append((tc.get("name"), case_outcome(tc)))
        except ET.ParseError as e:
            out.write("*xml\tunreadable: %s\n" % e)
    else:
        # regrtest writes its XML only at the end: a run that died has
        # none, and the cases it finished are read from its -v lines.
        for name, word in VERBOSE.findall(log):
            cases.append((name, VERBOSE_OUTCOME.get(word.split()[0], word)))
    emit(cases, out)


# unittest's -v lines: "test_x (pkg.module.Class.test_x) ... ok", the
# outcome sometimes on a later line when the test printed something.
VERBOSE = re.compile(r"^\w+ \(([\w.]+)\)(?:\n.*?)?? \.\.\. (ok|FAIL|ERROR|skipped\b|expected failure|unexpected success)", re.M)
VERBOSE_OUTCOME = {"ok": "ok", "FAIL": "failure", "ERROR": "error",
                   "skipped": "skipped", "expected": "ok", "unexpected": "failure"}


# TAP as GLib's test programs write it with --tap: "ok 3 /path",
# "not ok 3 /path", "ok 3 /path # SKIP why".
TAP = re.compile(r"^(ok|not ok) \d+ (\S+)(?: # (SKIP|TODO)\b.*)?$")


def cmd_tap(name, rc, tappath):
    text = read(tappath)
    cases = []
    for line in text.splitlines():
        m = TAP.match(line)
        if m:
            outcome = "skipped" if m.group(3) == "SKIP" else m.group(1)
            cases.append((m.group(2), outcome))
    status = status_of(rc, "")
    # Where a program that died stopped: after its last case (the message
    # of a "Bail out!" names temporary files, which differ from run to run).
    if status.startswith("signal") and cases:
        status += ", after " + cases[-1][0]
    sys.stdout.write("*\t%s\n" % status)
    emit(cases, sys.stdout)


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def load(path):
    """A .res file as (status, {case: outcome}, [case order])."""
    status, cases, order = "no result file", {}, []
    if os.path.exists(path):
        status = ""
        for line in read(path).splitlines():
            name, _, outcome = line.partition("\t")
            if name.startswith("*"):
                status += ("; " if status else "") + outcome
            else:
                cases[name] = outcome
                order.append(name)
    return status, cases, order


def short(s, n=160):
    return s if len(s) <= n else s[: n - 3] + "..."


def compare_one(name, runs):
    """One test program's three runs: a verdict line."""
    statuses = [r[0] for r in runs]
    names = []
    for r in runs:
        names.extend(c for c in r[2] if c not in names)
    # A run that died stops having results: the cases after the one it
    # died in are counted, not named (the status names where it died).
    died = [s.startswith("signal") or s.startswith("exit 124") for s in statuses]
    differ, cut = [], [0, 0, 0]
    for c in names:
        got = [r[1].get(c, "missing") for r in runs]
        if len(set(got)) == 1:
            continue
        short_runs = [i for i, o in enumerate(got) if o == "missing" and died[i]]
        rest = {o for i, o in enumerate(got) if i not in short_runs}
        if short_runs and len(rest) <= 1:
            for i in short_runs:
                cut[i] += 1
            continue
        differ.append("%s (%s)" % (c, " / ".join(got)))
    plain = runs[0][1]
    ran = sum(1 for o in plain.values() if o != "skipped")
    skipped = len(plain) - ran
    bad = [c for c in runs[0][2] if plain[c] in ("failure", "error", "not ok")]
    if len(set(statuses)) > 1 or differ:
        what = []
        if len(set(statuses)) > 1:
            what.append("ended %s" % " / ".join(
                "%s: %s" % (run, s) for run, s in zip(RUNS, statuses)))
        if differ:
            what.append("%d of %d cases differ (plain / preload / audit): %s"
                        % (len(differ), len(names), "; ".join(differ)))
        for run, n in zip(RUNS, cut):
            if n:
                what.append("%d case%s never ran in the %s run, which died"
                            % (n, "" if n == 1 else "s", run))
        if bad:
            what.append("%d failing alike in all three: %s" % (
                len(bad), short(", ".join(bad), 300)))
        return "fail", "%s: %s" % (name, "; ".join(what)), len(differ) + sum(cut)
    if not names and "skipped: " in statuses[0]:
        return "skip", "%s: skipped whole in all three runs: %s" % (
            name, statuses[0].split("skipped: ", 1)[1]), 0
    if not names:
        return "fail", "%s: no case ran in any run (%s)" % (name, statuses[0]), 0
    detail = "%d cases alike in all three runs (%d ran, %d skipped)" % (
        len(names), ran, skipped)
    if bad:
        detail += ", %d of them failing alike in all three: %s" % (
            len(bad), short(", ".join(bad), 300))
    return "pass", "%s: %s" % (name, detail), 0


def cmd_compare(*dirs, only=None):
    progs = [only] if only else sorted({f[:-4] for d in dirs for f in os.listdir(d)
                                        if f.endswith(".res")})
    ran = [0, 0, 0]
    total = [0, 0, 0]
    ndiffer = 0
    for p in progs:
        runs = [load(os.path.join(d, p + ".res")) for d in dirs]
        for i, r in enumerate(runs):
            total[i] += len(r[1])
            ran[i] += sum(1 for o in r[1].values() if o != "skipped")
        verdict, line, differ = compare_one(p, runs)
        ndiffer += differ
        print("%s %s" % (verdict, short(line, 2000)))
    print("total %d programs; cases per run (plain, preload, audit): %s; "
          "of them ran (not skipped): %s; cases that differ: %d"
          % (len(progs), ", ".join(map(str, total)),
             ", ".join(map(str, ran)), ndiffer))


def cmd_module(module, *dirs):
    """regrtest's results of one module in each of three folders (MODULE.rc
    holds the exit status), put in the plain form and compared: one Python
    start instead of four, which counts where a start takes a second."""
    for d in dirs:
        base = os.path.join(d, module)
        rc = read(base + ".rc").strip() or "255"
        with open(base + ".res", "w") as out:
            cmd_regrtest(module, rc, base + ".log", base + ".xml", out)
    cmd_compare(*dirs, only=module)


def main(argv):
    cmds = {"regrtest": (cmd_regrtest, 4), "tap": (cmd_tap, 3),
            "compare": (cmd_compare, 3), "module": (cmd_module, 4)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 64
    cmds[argv[1]][0](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
