"""Turns a seccomp profile in Docker's format into the linux.seccomp object
of an OCI runtime configuration, as Docker and Podman do before they hand a
container to runc or crun.

Usage: python3 seccomp-oci.py PROFILE [--without NAME,...] [--allow NAME,...]

Docker's format names, per rule, the capabilities and architectures it is
for (includes, excludes) and a minimum kernel; the OCI form has only what
applies.  The container gets Docker's default capability set, so a rule is
kept when every capability it includes is in that set and none it excludes
is, and when it applies to x86-64.  --without removes system calls from
every rule (an older profile that did not list them yet), and --allow adds
a rule that allows them (what docs/services.md tells an administrator to add).
The result goes to stdout.  Runs under the guest's python3.11 -S: json and
sys only.
"""
import json
import sys

# Docker's default capabilities (moby's oci/caps/defaults.go).
DEFAULT_CAPS = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE",
}
ARCH = "SCMP_ARCH_X86_64"


def applies(rule):
    inc = rule.get("includes") or {}
    exc = rule.get("excludes") or {}
    if any(c not in DEFAULT_CAPS for c in inc.get("caps") or []):
        return False
    if any(c in DEFAULT_CAPS for c in exc.get("caps") or []):
        return False
    if inc.get("arches") and "amd64" not in inc["arches"]:
        return False
    if "amd64" in (exc.get("arches") or []):
        return False
    return True


def convert(profile, without, allow):
    out = {"defaultAction": profile["defaultAction"]}
    if "defaultErrnoRet" in profile:
        out["defaultErrnoRet"] = profile["defaultErrnoRet"]
    arches = []
    for m in profile.get("archMap") or []:
        if m["architecture"] == ARCH:
            arches = [ARCH] + list(m.get("subArchitectures") or [])
    out["architectures"] = arches or [ARCH]
    rules = []
    for rule in profile["syscalls"]:
        if not applies(rule):
            continue
        names = rule.get("names") or ([rule["name"]] if rule.get("name") else [])
        names = [n for n in names if n not in without]
        if not names:
            continue
        r = {"names": names, "action": rule["action"]}
        if rule.get("args"):
            r["args"] = [{k: a[k] for k in ("index", "value", "valueTwo", "op") if k in a}
                         for a in rule["args"]]
        if "errnoRet" in rule:
            r["errnoRet"] = rule["errnoRet"]
        rules.append(r)
    if allow:
        rules.append({"names": sorted(allow), "action": "SCMP_ACT_ALLOW"})
    out["syscalls"] = rules
    return out


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 64
    without, allow = set(), set()
    args = argv[2:]
    while args:
        opt, val, args = args[0], args[1] if len(args) > 1 else "", args[2:]
        if opt == "--without":
            without |= set(val.split(","))
        elif opt == "--allow":
            allow |= set(val.split(","))
        else:
            sys.stderr.write("seccomp-oci.py: unknown option %r\n" % opt)
            return 64
    with open(argv[1]) as f:
        profile = json.load(f)
    json.dump(convert(profile, without, allow), sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
