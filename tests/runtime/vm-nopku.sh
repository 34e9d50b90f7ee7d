#!/bin/sh
# In the guest booted with a CPU that lacks PKU (-cpu max,-pku, by
# tests/vm/run): Debian's kernel then fails pkey_alloc with ENOSPC, and xom
# must say that the CPU lacks protection keys, not that they are all in use;
# then run the program as it was, or refuse it under require=1.
# (The guest's /bin is static busybox, which no preload reaches: the
# programs are dynamically linked ones from tests/vm/files.list.)
R=$(cd "$(dirname "$0")/../.." && pwd)
B=$R/build
. "$R/tests/lib.sh"
W=/tmp/xom-nopku
mkdir -p "$W"
unset XOM_OPTIONS LD_PRELOAD LD_AUDIT
msg="xom: this CPU has no memory protection keys (PKU); running unprotected"
XOM_OPTIONS=store=off LD_PRELOAD=$B/libxom.so /usr/bin/ls -d / >"$W/out" 2>"$W/err"; rc=$?
t_check nopku-notice '[ $rc = 0 ] && [ "$(cat $W/out)" = / ] && [ "$(cat $W/err)" = "$msg" ]' "rc $rc, stderr '$(cat $W/err)'"
XOM_OPTIONS=store=off:require=1 LD_PRELOAD=$B/libxom.so /usr/bin/ls -d / 2>"$W/err"; rc=$?
t_check nopku-require-refuses '[ $rc = 126 ] && grep -q "^xom: refusing to run: this CPU has no memory protection keys" $W/err' "rc $rc, stderr '$(cat $W/err)'"
t_summary
