#!/bin/sh
# xom under a real systemd, in the emulated-PKU guest whose PID 1 is Debian
# 12's systemd (tests/vm/guest-services.list; this runs inside its
# xom-suite.service).  Usage: tests/cmd/guest-systemd.sh PART, the parts in
# order:
#   store   xom in /usr/local as `make install` lays it out (vm.mk runs it
#           on the host into build/tests/install), and the system store
#           built for the programs that the services run
#   dropin  docs/services.md's drop-in protects one service (xom status PID shows
#           it, its smaps prove it); under MemoryDenyWriteExecute=yes and
#           journald's SystemCallFilter= the kernel's own execute-only key
#           protects it where the filter refuses xom's, with one line
#   global  xom enable --system, then systemctl daemon-reexec: systemd
#           itself (PID 1), a service without the drop-in, and the
#           hardened daemons under their stock units (journald, udevd,
#           timesyncd, logind, resolved; the kernel's own key) are
#           protected; xom disable --system and another re-exec undo it
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
. tests/lib.sh
B=$PWD/build
W=/tmp/xom-systemd
INST=$B/tests/install
xom=/usr/local/bin/xom P=/usr/local/lib/xom/libxom.so
S=/var/cache/xom
PL=/etc/ld.so.preload
U=/etc/systemd/system
unset XOM_OPTIONS LD_PRELOAD LD_AUDIT
part=${1:-}
err() { tail -c 400 "$W/err" | tr '\n' '|'; }
prop() { systemctl show -p "$2" --value "$1"; }

# unit NAME EXEC [LINE...]: writes service NAME, which runs EXEC with its
# output in $W/NAME.out and .err, plus LINEs in [Service].
unit() {
	n=$1 e=$2; shift 2
	{
		# This systemd has none of a real system's targets to order after.
		printf '[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=%s\nStandardOutput=file:%s\nStandardError=file:%s\n' \
			"$e" "$W/$n.out" "$W/$n.err"
		for l in "$@"; do echo "$l"; done
	} >"$U/$n.service"
}
# started PID PATH: waits (10 s at most) until PID runs PATH.  From systemd
# 255 on, a service's process is systemd-executor until it execs the
# program, and MainPID names it from the fork.
# PATH may be a link (/lib/systemd/systemd-udevd, or any path under the
# merged /usr's /lib); the process's exe is the file's own path.
started() {
	local i=0 want
	want=$(readlink -f "$2")
	while [ "$(readlink "/proc/$1/exe" 2>/dev/null)" != "$want" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	# sleep(1) is past its start-up, xom's included, once it waits in
	# clock_nanosleep (230) or nanosleep (35): its exe changes at the
	# exec, before the dynamic linker has loaded anything.
	case $want in */sleep)
		while [ $i -lt 100 ]; do
			case $(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null) in 230|35) break ;; esac
			sleep 0.1
			i=$((i + 1))
		done ;;
	esac
}
# dropin NAME [LINE...]: docs/services.md's drop-in for service NAME, with LINEs.
dropin() {
	n=$1; shift
	mkdir -p "$U/$n.service.d"
	{
		printf '[Service]\nEnvironment=LD_PRELOAD=%s\n' "$P"
		for l in "$@"; do echo "$l"; done
	} >"$U/$n.service.d/xom.conf"
}

# The way the kernel's own execute-only key is applied where a unit's
# SystemCallFilter= refuses pkey_alloc: by mprotect(PROT_EXEC) where the
# kernel enforces MemoryDenyWriteExecute= (it lets r-x become --x), by
# mapping the code again from its file where systemd's seccomp filter
# refuses that too.  The dropin part finds which ($W/mdwe).
kernel_key_way() {
	case $(cat "$W/mdwe" 2>/dev/null) in
	kernel) echo 'by mprotect(PROT_EXEC)' ;;
	seccomp) echo 'by mapping it again from its file with PROT_EXEC' ;;
	*) echo 'unknown: the dropin part did not find how MemoryDenyWriteExecute= is enforced' ;;
	esac
}

case $part in
store)
	rm -rf "$W" "$S" && mkdir -p "$W"
	t_check systemd-is-pid1 '[ "$(cat /proc/1/comm)" = systemd ]' "PID 1 is $(cat /proc/1/comm)"
	[ -x "$INST$xom" ] || { t_fail systemd-store "no $INST: vm.mk's make install DESTDIR did not run"; t_summary; exit 1; }
	cp -a "$INST/usr/local/." /usr/local/
	chmod 755 / /usr /usr/local /usr/local/lib /usr/local/lib/xom
	start=$(date +%s)
	"$xom" cache build --store "$S" /usr/bin/sleep /usr/bin/sha256sum /usr/bin/cat \
		/lib/systemd/systemd /usr/bin/systemctl /lib/systemd/systemd-journald \
		/lib/systemd/systemd-timesyncd /lib/systemd/systemd-logind /usr/bin/dbus-daemon \
		/lib/systemd/systemd-udevd /lib/systemd/systemd-resolved \
		/usr/bin/journalctl "$B/tests/runtime/xomtest" "$xom" >"$W/out" 2>"$W/err"
	rc=$?
	echo "# store built in $(( $(date +%s) - start )) s: $(cat "$W/err")"
	t_check systemd-store-built '[ $rc = 0 ] && [ -s $S/plans ]' "rc $rc: $(err)"
	;;

dropin)
	[ -s "$S/plans" ] || { t_fail systemd-dropin "no store: the store part did not run"; t_summary; exit 1; }
	seq 1 2000 >"$W/data"
	ref=$(/usr/bin/sha256sum "$W/data")
	unit xom-sleep "/usr/bin/sleep 600"
	dropin xom-sleep
	unit xom-mdwe "/usr/bin/sha256sum $W/data" Type=oneshot MemoryDenyWriteExecute=yes
	dropin xom-mdwe
	unit xom-mdwe-require "/usr/bin/sha256sum $W/data" Type=oneshot MemoryDenyWriteExecute=yes
	dropin xom-mdwe-require Environment=XOM_OPTIONS=require=1
	# How this systemd enforces MemoryDenyWriteExecute=: systemd 252 with
	# a seccomp filter, which refuses pkey_mprotect; systemd 257 on a
	# kernel with PR_SET_MDWE (6.3 on) with the kernel's own rule, which
	# forbids making memory executable but lets r-x become --x.
	unit xom-mdwe-how "/bin/grep ^Seccomp: /proc/self/status" Type=oneshot MemoryDenyWriteExecute=yes
	unit xom-mdwe-sleep "/usr/bin/sleep 600" MemoryDenyWriteExecute=yes
	dropin xom-mdwe-sleep
	# journald's hardening in Debian 12's unit file, as far as a service
	# without its sockets can have it.
	unit xom-hard-sleep "/usr/bin/sleep 600" MemoryDenyWriteExecute=yes \
		"SystemCallFilter=@system-service" SystemCallErrorNumber=EPERM \
		SystemCallArchitectures=native LockPersonality=yes NoNewPrivileges=yes \
		RestrictRealtime=yes RestrictSUIDSGID=yes ProtectKernelModules=yes
	dropin xom-hard-sleep
	systemctl daemon-reload
	systemctl start xom-mdwe-how.service
	mdwe=seccomp
	grep -q '^Seccomp:[[:space:]]*0$' "$W/xom-mdwe-how.out" && mdwe=kernel
	echo $mdwe >"$W/mdwe"
	echo "# MemoryDenyWriteExecute=yes here: $(cat "$W/xom-mdwe-how.out") ($mdwe)"
	# ---- the drop-in protects the service ---------------------------------
	systemctl start xom-sleep.service
	pid=$(prop xom-sleep.service MainPID)
	started "$pid" /usr/bin/sleep
	cat "/proc/$pid/smaps" >"$W/smaps" 2>"$W/err"
	ns=$(xo_pages "$W/smaps" /usr/bin/sleep) nl=$(xo_pages "$W/smaps" libc.so.6)
	t_check dropin-protects '[ "$pid" -gt 1 ] && [ "$ns" -gt 0 ] && [ "$nl" -gt 0 ] && grep -q " $P\$" $W/smaps && ! [ -s $W/xom-sleep.err ]' "pid $pid, execute-only pages: sleep $ns, libc $nl: $(head -c 200 $W/xom-sleep.err)"
	# docs/services.md's way to see it.
	"$xom" status "$(systemctl show -p MainPID --value xom-sleep)" >"$W/out" 2>"$W/err"
	t_check dropin-status 'grep -Eq "^ *[1-9][0-9]* +0 .*libc.so.6$" $W/out && grep -q "/usr/bin/sleep$" $W/out' "$(tr '\n' '|' <$W/out) $(err)"
	systemctl stop xom-sleep.service
	# ---- MemoryDenyWriteExecute=yes and SystemCallFilter=@system-service ----
	# Where the kernel enforces MemoryDenyWriteExecute=, xom protects as
	# anywhere else, with no line.  Where systemd's seccomp filter does,
	# pkey_mprotect is refused and the kernel's own execute-only key
	# protects the same pages, with one line that names the unit's
	# setting; as it does where the unit's allow-list lacks pkey_alloc,
	# as journald's, logind's and resolved's stock units have it.
	systemctl start xom-mdwe.service
	st=$(prop xom-mdwe.service ExecMainStatus)
	if [ $mdwe = kernel ]; then
		t_check dropin-mdwe-kernel-same '[ "$st" = 0 ] && [ "$(cat $W/xom-mdwe.out)" = "$ref" ] && ! [ -s $W/xom-mdwe.err ]' "status $st: $(cat $W/xom-mdwe.out $W/xom-mdwe.err | tr '\n' '|')"
	else
		t_check dropin-mdwe-kernel-key '[ "$st" = 0 ] && [ "$(cat $W/xom-mdwe.out)" = "$ref" ] && [ $(wc -l <$W/xom-mdwe.err) = 1 ] && grep -q "^xom: pkey_mprotect is refused (not permitted, errno 1) by a seccomp filter: this systemd unit.s MemoryDenyWriteExecute=yes (or a SystemCallFilter= without pkey_mprotect); xom makes code execute-only with the kernel.s own execute-only key (key [0-9]*) instead, by mapping it again from its file with PROT_EXEC$" $W/xom-mdwe.err' "status $st: $(cat $W/xom-mdwe.out $W/xom-mdwe.err | tr '\n' '|')"
	fi
	for u in xom-mdwe-sleep xom-hard-sleep; do
		systemctl start $u.service
		pid=$(prop $u.service MainPID)
		started "$pid" /usr/bin/sleep
		cat "/proc/$pid/smaps" >"$W/smaps" 2>"$W/err"
		ns=$(xo_pages "$W/smaps" /usr/bin/sleep) nl=$(xo_pages "$W/smaps" libc.so.6) nx=$(xo_pages "$W/smaps" "$P")
		"$xom" status "$pid" >"$W/status" 2>&1
		t_check $u-protects '[ "$pid" -gt 1 ] && [ "$ns" -gt 0 ] && [ "$nl" -gt 0 ] && grep -Eq "^ *[1-9][0-9]* +0 +[0-9] .*libc.so.6$" $W/status' "pid $pid, execute-only pages: sleep $ns, libc $nl, libxom $nx: $(head -c 200 $W/$u.err) $(tr '\n' '|' <$W/status)"
		systemctl stop $u.service
	done
	# The hardened unit's line, if any, names its allow-list.
	t_check hard-unit-said '! [ -s $W/xom-hard-sleep.err ] || { [ $(wc -l <$W/xom-hard-sleep.err) = 1 ] && grep -q "^xom: pkey_alloc is refused (not permitted, errno 1) by a seccomp filter: this systemd unit.s SystemCallFilter= lacks pkey_alloc; xom makes code execute-only with the kernel.s own execute-only key (key 1) instead, $(kernel_key_way)$" $W/xom-hard-sleep.err; }' "$(cat $W/xom-hard-sleep.err)"
	echo "# hardened unit: $(cat $W/xom-hard-sleep.err 2>/dev/null || echo 'no line: its filter lets pkey_alloc through')"
	systemctl start xom-mdwe-require.service 2>/dev/null
	st=$(prop xom-mdwe-require.service ExecMainStatus)
	t_check dropin-mdwe-require-runs '[ "$st" = 0 ] && [ "$(cat $W/xom-mdwe-require.out)" = "$ref" ]' "status $st: $(cat $W/xom-mdwe-require.out $W/xom-mdwe-require.err | tr '\n' '|')"
	;;

global)
	[ -s "$S/plans" ] || { t_fail systemd-global "no store: the store part did not run"; t_summary; exit 1; }
	unit xom-plain "/usr/bin/sleep 600"
	systemctl daemon-reload
	"$xom" enable --system >"$W/out" 2>"$W/err"
	rc=$?
	t_check global-enable '[ $rc = 0 ] && [ "$(cat $PL)" = "$P" ] && has $W/err "until '"'systemctl daemon-reexec'"' and a restart"' "rc $rc: $(err)"
	# systemd reads /etc/ld.so.preload again when it re-executes itself.
	systemctl daemon-reexec
	cat /proc/1/smaps >"$W/smaps1" 2>"$W/err"
	# systemd's library is named by its version (libsystemd-shared-252.so
	# on Debian 12, -257 on Debian 13).
	shared=$(grep -o 'libsystemd-shared-[0-9]*[.]so' "$W/smaps1" | head -n 1)
	n1=$(xo_pages "$W/smaps1") nl=$(xo_pages "$W/smaps1" libc.so.6) ns=$(xo_pages "$W/smaps1" "${shared:-libsystemd-shared}")
	t_check global-pid1-protected '[ "$(cat /proc/1/comm)" = systemd ] && grep -q " $P\$" $W/smaps1 && [ "$nl" -gt 0 ] && [ "$ns" -gt 0 ]' "PID 1 $(cat /proc/1/comm): execute-only pages: $n1 in all, libc $nl, libsystemd-shared $ns"
	systemctl start xom-plain.service
	pid=$(prop xom-plain.service MainPID)
	started "$pid" /usr/bin/sleep
	cat "/proc/$pid/smaps" >"$W/smaps" 2>"$W/err"
	ns=$(xo_pages "$W/smaps" /usr/bin/sleep)
	t_check global-service-protected '[ "$pid" -gt 1 ] && [ "$ns" -gt 0 ] && ! [ -s $W/xom-plain.err ]' "pid $pid, execute-only pages of sleep: $ns: $(head -c 200 $W/xom-plain.err) libxom mapped: $(grep -c " $P\$" $W/smaps); $("$xom" status "$pid" 2>&1 | head -n 4 | tr '\n' '|')"
	"$xom" status --system >"$W/table" 2>"$W/err"
	t_check global-status-system 'grep -Eq "^ +1 +preload +[1-9][0-9]* .* [(]systemd[)]$" $W/table' "$(head -n 5 $W/table | tr '\n' '|') $(err)"
	systemctl stop xom-plain.service
	# The hardened daemons with their stock units: journald, udevd,
	# timesyncd, logind and resolved.  Their SystemCallFilter= refuses
	# pkey_alloc and their MemoryDenyWriteExecute=yes mprotect(PROT_EXEC),
	# so the kernel's own key protects them, every object as its plan
	# says: xom status gives an object's figures only where the pages
	# execute-only are the plan's.  journald's one line goes nowhere
	# (StandardOutput=null), so it goes to the journal.  logind and
	# resolved need the system bus, which is not hardened and runs under
	# xom's own key.  The daemons' users, as their sysusers.d files make
	# them.
	grep -q '^systemd-timesync:' /etc/passwd ||
		echo 'systemd-timesync:x:997:997:systemd Time Synchronization:/:/usr/sbin/nologin' >>/etc/passwd
	grep -q '^systemd-timesync:' /etc/group || echo 'systemd-timesync:x:997:' >>/etc/group
	grep -q '^systemd-resolve:' /etc/passwd ||
		echo 'systemd-resolve:x:996:996:systemd Resolver:/:/usr/sbin/nologin' >>/etc/passwd
	grep -q '^systemd-resolve:' /etc/group || echo 'systemd-resolve:x:996:' >>/etc/group
	grep -q '^messagebus:' /etc/passwd || echo 'messagebus:x:100:102::/nonexistent:/usr/sbin/nologin' >>/etc/passwd
	grep -q '^messagebus:' /etc/group || echo 'messagebus:x:102:' >>/etc/group
	[ -s /etc/machine-id ] || tr -d - </proc/sys/kernel/random/uuid >/etc/machine-id
	# The bus's units and logind's order themselves after a real system's
	# targets (DefaultDependencies=yes), which this systemd has none of: a
	# drop-in takes that away and nothing else.
	for u in dbus.socket dbus.service systemd-logind.service; do
		mkdir -p "$U/$u.d"
		printf '[Unit]\nDefaultDependencies=no\n' >"$U/$u.d/no-targets.conf"
	done
	systemctl daemon-reload
	systemctl start systemd-journald.socket systemd-journald-dev-log.socket systemd-journald.service
	systemctl start dbus.socket systemd-udevd-control.socket systemd-udevd-kernel.socket
	for d in journald udevd timesyncd dbus logind resolved; do
		u=systemd-$d exe=/lib/systemd/systemd-$d
		[ $d = dbus ] && u=dbus exe=/usr/bin/dbus-daemon
		timeout 60 systemctl start $u.service 2>"$W/start-err"
		pid=$(prop $u.service MainPID)
		started "$pid" $exe
		# udevd's file is udevadm's (a link on Debian 12).
		exe=$(readlink -f "$exe")
		cat "/proc/$pid/smaps" >"$W/smaps" 2>"$W/err"
		nd=$(xo_pages "$W/smaps" "${exe##*/}") nl=$(xo_pages "$W/smaps" libc.so.6)
		"$xom" status "$pid" >"$W/status" 2>&1
		nobj=$(awk '$1 ~ /^[0-9]+$/ && $NF != "[vdso]"' "$W/status" | wc -l)
		bad=$(awk '$1 ~ /^[0-9]+$/ && $NF != "[vdso]" && $4 !~ /^[0-9]+$/' "$W/status" | wc -l)
		t_check $d-protected '[ "$pid" -gt 1 ] && [ "$nd" -gt 0 ] && [ "$nl" -gt 0 ] && [ "$nobj" -gt 3 ] && [ "$bad" = 0 ]' "pid $pid ($(prop $u.service ActiveState)): execute-only pages: $d $nd, libc $nl; $bad of $nobj objects not as their plans say: $(tr '\n' '|' <$W/status) $(cat $W/start-err) $(systemctl status --no-pager -l $u 2>&1 | tail -n 12 | tr '\n' '|')"
	done
	journalctl -t xom --no-pager -o cat >"$W/journal" 2>&1
	t_check journald-said-in-journal 'grep -q "^xom: pkey_alloc is refused (not permitted, errno 1) by a seccomp filter: this systemd unit.s SystemCallFilter= lacks pkey_alloc; xom makes code execute-only with the kernel.s own execute-only key (key 1) instead, $(kernel_key_way)$" $W/journal' "$(head -c 600 $W/journal)"
	# A blocked read in a hardened service whose stderr goes nowhere: the
	# report is in the journal.
	unit xom-hard-read "$B/tests/runtime/xomtest self" Type=oneshot MemoryDenyWriteExecute=yes \
		"SystemCallFilter=@system-service" SystemCallErrorNumber=EPERM
	sed -i 's|^StandardError=.*|StandardError=null|' "$U/xom-hard-read.service"
	systemctl daemon-reload
	systemctl start xom-hard-read.service 2>/dev/null
	journalctl -t xom --no-pager -o cat >"$W/journal" 2>&1
	t_check hardened-blocked-read-in-journal 'grep -q "^xom: blocked read of .*xomtest+0x[0-9a-f]*, in xom_test_target) by instruction" $W/journal' "$(prop xom-hard-read.service ExecMainStatus): $(head -c 600 $W/journal)"
	"$xom" disable --system >"$W/out" 2>"$W/err"
	rc=$?
	systemctl daemon-reexec
	cat /proc/1/smaps >"$W/smaps1" 2>/dev/null
	n1=$(xo_pages "$W/smaps1")
	t_check global-disable '[ $rc = 0 ] && [ ! -e $PL ] && [ "$n1" = 0 ] && ! grep -q " $P\$" $W/smaps1 && [ "$(cat /proc/1/comm)" = systemd ]' "rc $rc, PID 1 keeps $n1 execute-only pages: $(err)"
	;;
*)
	echo "usage: guest-systemd.sh store|dropin|global" >&2
	exit 2
	;;
esac
t_summary
