#!/bin/bash
# make check-stock: a stock Debian system with xom installed the way an
# operator installs it, booted whole under QEMU's emulated protection
# keys: every long-running process must run execute-only as its plans say,
# the hardened systemd daemons (journald, udevd, logind, resolved,
# timesyncd) as well as PID 1, sshd, cron, dbus and the gettys.
#
#   tests/deb/stock-boot.sh [--keep] [DIR]
#   tests/deb/stock-boot.sh --again DIR   boots the system that a run with
#                                         --keep left in DIR again, as it
#                                         is (the same xom), with the check
#                                         written anew; DIR is kept
#
# The system is this machine's Debian release (12 or 13) as debootstrap
# makes it by default (every "required" and "important" package, systemd as
# init), plus the daemons of a usual server: udev, dbus, systemd-timesyncd,
# systemd-resolved, openssh-server and cron.  Nothing of it is changed but
# what an operator does,
#   apt-get install ./libxom_*.deb ./xom_*.deb ./xom-enable_*.deb
# with make deb's packages, which fills the system plan store and lists
# libxom.so in /etc/ld.so.preload.  The harness adds only its check, a
# service that runs once the boot has finished, with tests/runtime's
# xomtest, which reads code; and it leaves out the documentation, the man
# pages and apt's lists to keep the image small.
#
# The system is booted from an initramfs (its / is the kernel's rootfs,
# systemd is PID 1 through rdinit=/sbin/init, with the stock default
# target), on the release's own kernel (tests/vm/fetch) and QEMU's
# -cpu max, which implements protection keys under TCG.  The checks:
#   installed   the packages installed; /etc/ld.so.preload lists libxom.so
#   booted      the boot finished, with no failed unit
#   daemons     each of the daemons above runs
#   process-*   each process alive when the boot is done (the check's own
#               aside) has execute-only pages, and every object it maps is
#               as its plan says (xom status PID gives an object's figures
#               only then): the pages that its plan keeps readable are the
#               only readable code; one check per process
#   status      xom status --system counts every process as preloaded
#   read-blocked           a program that reads libc's code dies, and
#                          xom names the read
#   hardened-read-blocked  the same under journald's hardening
#                          (MemoryDenyWriteExecute=yes, SystemCallFilter=
#                          @system-service), where the kernel's own key
#                          protects it, said in one line
#   hardened-code-runs     and there the code still runs
#   journal     the hardened units' line (pkey_alloc refused by their
#               SystemCallFilter=, the kernel's own key instead) is in the
#               journal, where journald's own stderr (/dev/null) cannot
#               put it
#
# DIR (default: a new folder under /var/tmp) holds the system and its image,
# and is deleted at the end unless --keep is given.  The console and the
# report go to build/stock-boot/.  Needs root, debootstrap and QEMU
# (installed if missing) and the Debian mirror (MIRROR, default: the one
# this machine's apt uses).  Says SKIP where it cannot run, and under
# XOM_SKIP_VM=1 (but in CI); under CI=true a skip is a failure.  Takes two to three minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
. tests/debian-releases.sh

keep=0 again=0
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1; shift ;;
	--again) again=1 keep=1; shift ;;
	-h|--help) sed -n '2,/^set -e/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-*) echo "stock-boot: unknown option '$1' (see --help)" >&2; exit 64 ;;
	*) break ;;
	esac
done

cannot() {
	case ${CI:-} in
	true|1|yes) t_fail check-stock "$1 (CI=true: a skip is a failure)" ;;
	*) t_skip check-stock "$1" ;;
	esac
	t_summary
	exit
}
# stop NAME DETAIL: a step failed; nothing after it can be checked.
stop() {
	t_fail "$1" "$2"
	t_summary
	exit 1
}
[ "$(id -u)" = 0 ] || cannot "needs root (debootstrap, chroot, mount)"
# XOM_SKIP_VM=1 leaves out what boots the emulated-PKU guest, except in
# CI, as tests/vm/run has it.
case ${XOM_SKIP_VM:-0}:${CI:-} in
1:true|1:1|1:yes) echo "stock-boot: XOM_SKIP_VM=1 is ignored in CI (CI=$CI)" >&2 ;;
1:*) cannot "XOM_SKIP_VM=1: the stock system was not booted" ;;
esac

B=${B:-build}
logs=$(pwd)/$B/stock-boot
mirror=${MIRROR:-$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
	awk -v r="$release" '$1 == r { print $2; exit }')}
mirror=${mirror:-http://deb.debian.org/debian}
if [ "$again" = 1 ]; then
	dir=${1:?usage: tests/deb/stock-boot.sh --again DIR}
	[ -e "$dir/installed" ] || { echo "stock-boot: $dir holds no system that a run with --keep installed" >&2; exit 2; }
else
	dir=${1:-$(mktemp -d /var/tmp/xom-stock.XXXXXX)}
	[ -z "$(ls -A "$dir" 2>/dev/null)" ] || { echo "stock-boot: $dir is not empty" >&2; exit 2; }
fi
mkdir -p "$dir" "$logs"
dir=$(cd "$dir" && pwd)
root=$dir/root
rm -f "$logs"/*.log

# Unmounts what this run mounted below the system, then deletes it unless
# it is to be kept; never while anything is still mounted there.
cleanup() {
	local m
	for m in dev/pts dev sys proc; do
		if mountpoint -q "$root/$m" 2>/dev/null; then
			umount "$root/$m" 2>/dev/null || umount -l "$root/$m" 2>/dev/null || true
		fi
	done
	if [ "$keep" = 0 ]; then
		if findmnt -rn -o TARGET | grep -q "^$dir/"; then
			echo "stock-boot: $dir still has mounts; not deleting it" >&2
		else
			rm -rf --one-file-system "$dir"
		fi
	else
		echo "# kept $dir"
	fi
}
trap cleanup EXIT

t0=$(date +%s)
step() { echo "# $* ($(( $(date +%s) - t0 )) s)"; }
in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# The program that reads code in the booted system (tests/runtime).
make -s "$B/tests/runtime/xomtest" B="$B" >/dev/null || stop booted "cannot build $B/tests/runtime/xomtest"
if [ "$again" = 0 ]; then
	step "the host's tools and make deb"
	if ! command -v debootstrap >/dev/null; then
		tests/deps.sh debtest || cannot "no debootstrap (tests/deps.sh debtest could not install it)"
	fi
	tests/deps.sh vm >&2 || cannot "cannot install QEMU (tests/deps.sh vm)"
	make -s deb B="$B" >"$logs/make-deb.log" 2>&1 || stop installed "make deb failed: $(tail -n 5 "$logs/make-deb.log")"
	debs=$(ls "$B"/deb/libxom_*.deb "$B"/deb/xom_*.deb "$B"/deb/xom-enable_*.deb 2>/dev/null || true)
	[ "$(echo "$debs" | wc -w)" = 3 ] || stop installed "make deb did not leave libxom, xom and xom-enable in $B/deb"

	step "debootstrap $release $mirror"
	debootstrap --include="systemd-sysv,udev,dbus,systemd-timesyncd,systemd-resolved,openssh-server,cron" \
		"$release" "$root" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
		stop installed "debootstrap failed: $(tail -n 5 "$logs/debootstrap.log")"

	step "apt-get install the three packages, as an operator does"
	mount -t proc proc "$root/proc"
	mount -t sysfs sys "$root/sys"
	mount --bind /dev "$root/dev"
	mount --bind /dev/pts "$root/dev/pts"
	mkdir -p "$root/tmp/xom-debs"
	# shellcheck disable=SC2086 # one word per package
	cp $debs "$root/tmp/xom-debs/"
	# apt in the chroot resolves names as the host does; systemd-resolved's
	# link in /etc/resolv.conf goes back in place afterwards.
	mv "$root/etc/resolv.conf" "$root/etc/resolv.conf.stock"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	rc=0
	{
		in_root apt-get update -q &&
		in_root sh -c 'apt-get install -y -q --no-install-recommends /tmp/xom-debs/*.deb'
	} >"$logs/install.log" 2>&1 || rc=$?
	in_root xom cache stats --store /var/cache/xom >"$logs/store.log" 2>&1 || true
	for m in dev/pts dev sys proc; do umount "$root/$m"; done
	mv -f "$root/etc/resolv.conf.stock" "$root/etc/resolv.conf"
	t_check installed '[ $rc = 0 ] && grep -qx /usr/lib/xom/libxom.so "$root/etc/ld.so.preload"' \
		"apt-get status $rc, /etc/ld.so.preload: $(cat "$root/etc/ld.so.preload" 2>&1): $(tail -n 5 "$logs/install.log")"
	[ "$rc" = 0 ] || { t_summary; exit 1; }
	rm -rf "$root/tmp/xom-debs" "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* \
		"$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
	find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} + 2>/dev/null || true
	touch "$dir/installed"
fi

# The check: once systemd says that the boot is done, a line per process
#   proc PID COMM UNIT OBJECTS EXEC-ONLY KEPT-READABLE NOT-AS-PLANNED KEYS [OBJECT...]
# from xom status PID, then the journal's xom lines and xom status
# --system, on the console between two markers; then QEMU's exit port.
cat >"$root/usr/local/sbin/xom-stock-check" <<'EOF'
#!/bin/sh
# tests/deb/stock-boot.sh's check, in the booted system.
exec >/dev/console 2>&1
systemctl is-system-running --wait >/dev/null 2>&1
sleep 5
me=$(cat /proc/self/cgroup)
echo
echo "@@stock-start"
echo "state $(systemctl is-system-running)"
echo "failed $(systemctl list-units --failed --no-legend --plain | awk '{ print $1 }' | tr '\n' ' ')"
for d in /proc/[0-9]*; do
	pid=${d#/proc/}
	[ -n "$(readlink "$d/exe" 2>/dev/null)" ] || continue    # a kernel thread
	[ "$(cat "$d/cgroup" 2>/dev/null)" = "$me" ] && continue  # this check
	comm=$(tr ' ' _ <"$d/comm" 2>/dev/null) unit=$(sed -n 's|^0::.*/||p' "$d/cgroup" 2>/dev/null)
	xom status "$pid" >/tmp/status 2>&1 || true
	echo "proc $pid $comm ${unit:--} $(awk '$1 ~ /^[0-9]+$/ && $NF != "[vdso]" {
		n++; xo += $1; keys[$3] = 1
		if ($4 ~ /^[0-9]+$/) rd += $2; else { bad++; what = what " " $NF } }
		END { for (k in keys) ks = ks (ks == "" ? "" : ",") k
		      printf "%d %d %d %d %s%s", n, xo, rd, bad, (ks == "" ? "-" : ks), what }' /tmp/status)"
	sed "s/^/status $pid /" /tmp/status
done
# Real reads of libc's code, where the fault handler must stop them:
# in a program that the preload protects with xom's key, and in one that
# runs under journald's hardening (the kernel's own key); the same
# program's code must still run there.
t=/usr/local/lib/xom-stock/xomtest
hard="-p MemoryDenyWriteExecute=yes -p SystemCallFilter=@system-service -p SystemCallErrorNumber=EPERM"
$t libc >/tmp/out 2>&1
echo "try plain-read $? $(grep -c '^xom: blocked read of ' /tmp/out) $(grep -c '^xom: pkey_alloc is refused' /tmp/out)"
sed 's/^/out plain-read /' /tmp/out
systemd-run --wait --pipe --quiet $hard $t libc >/tmp/out 2>&1
echo "try hardened-read $? $(grep -c '^xom: blocked read of ' /tmp/out) $(grep -c '^xom: pkey_alloc is refused' /tmp/out)"
sed 's/^/out hardened-read /' /tmp/out
systemd-run --wait --pipe --quiet $hard $t call >/tmp/out 2>&1
echo "try hardened-call $? $(grep -c '^xom: blocked read of ' /tmp/out) $(grep -c '^xom: pkey_alloc is refused' /tmp/out)"
sed 's/^/out hardened-call /' /tmp/out
journalctl -t xom -o cat --no-pager 2>&1 | sed 's/^/journal /'
xom status --system 2>&1 | sed 's/^/system /'
echo "@@stock-end"
printf '\001' | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
systemctl poweroff --no-block
EOF
chmod 755 "$root/usr/local/sbin/xom-stock-check"
mkdir -p "$root/usr/local/lib/xom-stock"
cp "$B/tests/runtime/xomtest" "$root/usr/local/lib/xom-stock/"
# Type=simple: the boot is done only when every job is, and the check
# waits for that.
cat >"$root/etc/systemd/system/xom-stock-check.service" <<'EOF'
[Unit]
Description=tests/deb/stock-boot.sh's check
After=multi-user.target

[Service]
Type=simple
ExecStart=/usr/local/sbin/xom-stock-check
EOF
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf ../xom-stock-check.service "$root/etc/systemd/system/multi-user.target.wants/"
echo stock >"$root/etc/hostname"

step "pack and boot"
tests/vm/fetch "$B/vm/cache" || stop booted "cannot get the guest kernel (see above)"
img=$dir/initrd
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --owner 0:0 --quiet) >"$img"
# As tests/vm/run's make_initrd and qemu_cmd: the archive must not end in
# the page of the guest's RAM where the microvm firmware keeps its ACPI
# tables, and the microvm has no ACPI (QEMU 10.0.13 dies early with it).
size=$(stat -c %s "$img")
head -c $(( (512 - size % 4096 + 4096) % 4096 )) /dev/zero >>"$img"
echo "# image: $(du -h "$img" | cut -f1), $(find "$root" -xdev | wc -l) files"
set +e
timeout -k 5 1200 qemu-system-x86_64 -M microvm,acpi=off -accel tcg -cpu max -smp 1 -m 3072M \
	-nodefaults -no-user-config -display none -no-reboot \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-kernel "$B/vm/cache/vmlinux" -initrd "$img" \
	-append "console=ttyS0 panic=-1 cryptomgr.notests tsc_early_khz=2600000 rdinit=/sbin/init" \
	-serial stdio </dev/null 2>&1 | sed -u 's/\r$//' >"$logs/console.log"
qrc=${PIPESTATUS[0]}
set -e
# The getty's prompt may share the start marker's line.
r=$logs/report.log
sed -n '/@@stock-start$/,/^@@stock-end$/p' "$logs/console.log" | sed '1d;$d' >"$r"
step "booted (QEMU status $qrc)"
field() { sed -n "s/^$1 //p" "$r"; }

t_check booted 'grep -q "^@@stock-end$" "$logs/console.log" && [ "$(field state)" = running ] && [ -z "$(field failed | tr -d " ")" ]' \
	"QEMU status $qrc; systemd $(field state), failed units: $(field failed); the console is in $logs/console.log"
grep -q "^@@stock-end$" "$logs/console.log" || { t_summary; exit 1; }

# One check per process, and the daemons that must be among them (comm,
# cut to 15 characters by the kernel).
seen=" "
while read -r _ pid comm unit n xo rd bad keys objs; do
	seen="$seen$comm "
	t_check "process-${unit%.service}" '[ "$n" -gt 0 ] && [ "$xo" -gt 0 ] && [ "$bad" = 0 ]' \
		"pid $pid ($unit): $n objects, $xo pages execute-only, $bad not as their plans say:${objs:- none mapped}: $(sed -n "s/^status $pid //p" "$r" | tr '\n' '|' | head -c 800)"
	[ "$bad" = 0 ] && echo "# $pid $comm ($unit): $n objects as their plans say, $xo pages execute-only, $rd kept readable by the plans, key $keys"
done < <(grep '^proc ' "$r")
missing=""
for d in systemd systemd-journal systemd-udevd systemd-logind systemd-resolve systemd-timesyn \
	dbus-daemon cron sshd agetty; do
	case $seen in *" $d "*) ;; *) missing="$missing $d" ;; esac
done
t_check daemons '[ -z "$missing" ]' "not running:$missing (running:$seen)"
total=$(field system | grep '^ *total: ' || true)
echo "# xom status --system: ${total# }"
t_check status 'echo "$total" | grep -Eq "total: ([0-9]+) processes: \\1 preload, 0 audit, 0 outside, 0 none"' "$total"
# try NAME: sets st (its exit status), blocked and kkey (how many lines
# named a blocked read, and the kernel's key) from the line
#   try NAME STATUS BLOCKED-LINES KERNEL-KEY-LINES
try() { read -r st blocked kkey < <(grep "^try $1 " "$r" | cut -d' ' -f3-) || st=none blocked=0 kkey=0; }
out() { sed -n "s/^out $1 //p" "$r" | head -c 600 | tr '\n' '|'; }
try plain-read
t_check read-blocked '[ "$st" = 139 ] && [ "$blocked" -gt 0 ]' "status $st (139: SIGSEGV), $(out plain-read)"
try hardened-read
t_check hardened-read-blocked '[ "$st" != 0 ] && [ "$blocked" -gt 0 ] && [ "$kkey" -gt 0 ]' "status $st, $(out hardened-read)"
try hardened-call
t_check hardened-code-runs '[ "$st" = 0 ] && [ "$kkey" -gt 0 ]' "status $st, $(out hardened-call)"
t_check journal 'field journal | grep -q "^xom: pkey_alloc is refused (not permitted, errno 1) by a seccomp filter: this systemd unit.s SystemCallFilter= lacks pkey_alloc; xom makes code execute-only with the kernel.s own execute-only key"' \
	"the journal's xom lines: $(field journal | head -n 5)"
echo "# $release, $(( $(date +%s) - t0 )) s; the report: $r"
t_summary
