#!/bin/bash
# make check-deb: the Debian packages of make deb (build/deb), installed as
# an operator would, in a minimal root of the release that built them
# (Debian 12 "bookworm" or 13 "trixie": debootstrap --variant=minbase,
# made once and kept in build/deb-root-CODENAME/root with the packages'
# dependencies downloaded).  Each run works on an overlay of that root, so
# the cached root stays as debootstrap left it.
#
#   install   apt-get install ./libxom*.deb ./xom*.deb ./xom-enable*.deb
#   preload   /etc/ld.so.preload names /usr/lib/xom/libxom.so
#   runs      a program runs; without protection keys it prints the
#             runtime's one xom: line and runs unprotected
#   loaded    a program has /usr/lib/xom/libxom.so mapped
#   store     the shipped profile lies beside the library, and the
#             postinst put it and the plans of the installed files into
#             the system store
#   upgrade   the packages installed over themselves: one preload entry,
#             and an entry the administrator took out stays out
#   trigger   a package that adds a library (built here from C) brings its
#             plan into the store through xom's dpkg file trigger; a build
#             of the current store lists no program again
#   remove    removing xom-enable takes its entry out and keeps the others;
#             a forced removal of libxom alone does too
#   purge     removing and purging everything leaves the file list of the
#             root as it was before (piuparts' check; dpkg's and apt's own
#             state and logs aside)
#
# Needs root, debootstrap (tests/deps.sh debtest) and the Debian mirror
# (MIRROR, default: the one this machine's apt uses), the first time only.
# Says SKIP with the reason where it cannot run; under CI=true that is a
# failure.  Logs: build/deb-root-CODENAME/logs.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh

B=${B:-build}
# The packages depend on this system's libraries: they are tested in a
# root of this system's release.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
top=$(pwd)/$B/deb-root-$codename
base=$top/root
run=$top/run
dir=$run/merged
logs=$top/logs

cannot() {
	case ${CI:-} in
	true|1|yes) t_fail check-deb "$1 (CI=true: a skip is a failure)" ;;
	*) t_skip check-deb "$1" ;;
	esac
	t_summary
	exit
}
[ "$(id -u)" = 0 ] || cannot "needs root (debootstrap, chroot, mount, dpkg in the root)"
case $codename in
bookworm|trixie) ;;
*) cannot "this system is '${codename:-unknown}': the packages are tested in a Debian 12 or 13 root of the release that built them" ;;
esac
if ! command -v debootstrap >/dev/null; then
	tests/deps.sh debtest || cannot "no debootstrap (tests/deps.sh debtest could not install it)"
fi
mkdir -p "$logs"

# Unmounts what this run mounted; the cached root stays.
umount_all() {
	local m
	for m in "$dir/dev" "$dir/proc" "$dir"; do
		if mountpoint -q "$m" 2>/dev/null; then
			umount -R "$m" 2>/dev/null || umount -lR "$m" 2>/dev/null || true
		fi
	done
}
trap umount_all EXIT
umount_all

t0=$(date +%s)
echo "== make deb"
make --no-print-directory -s deb B="$B" >"$logs/deb.log" 2>&1 ||
	{ t_fail deb-build "$(tail -5 "$logs/deb.log")"; t_summary; exit 1; }
debs=()
for p in libxom xom xom-enable; do
	f=("$B/deb/${p}_"*_amd64.deb)
	[ -e "${f[0]}" ] || { t_fail deb-build "no ${p}_*_amd64.deb in $B/deb"; t_summary; exit 1; }
	debs+=("${f[0]}")
done
t_pass deb-build

# The cached root: this release as debootstrap makes it, its package lists
# fetched and the packages' dependencies (what their Depends name, less
# each other) downloaded, not installed, so that later runs need no
# mirror.
host_uri() {
	apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
		awk -v s="$1" '$1 ~ s { sub("/$", "", $2); print $2; exit }'
}
deb_deps() {
	local f
	for f in "${debs[@]}"; do dpkg-deb -f "$f" Depends; done | tr ',' '\n' |
		sed 's/([^)]*)//; s/|.*//; s/[[:space:]]//g' | grep -Evx 'libxom|xom|' | sort -u
}
if [ ! -e "$base/.ready" ]; then
	mirror=${MIRROR:-$(host_uri "^$codename\$")}
	mirror=${mirror:-http://deb.debian.org/debian}
	rm -rf --one-file-system "$base"
	echo "== debootstrap --variant=minbase $codename $mirror"
	debootstrap --variant=minbase "$codename" "$base" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
		{ t_fail deb-root "$(tail -5 "$logs/debootstrap.log")"; t_summary; exit 1; }
	printf '#!/bin/sh\nexit 101\n' >"$base/usr/sbin/policy-rc.d"
	chmod 755 "$base/usr/sbin/policy-rc.d" "$base"
	cp /etc/resolv.conf "$base/etc/resolv.conf"
	chroot "$base" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin apt-get update -qq >"$logs/apt.log" 2>&1 &&
		chroot "$base" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --download-only $(deb_deps) >>"$logs/apt.log" 2>&1 ||
		{ t_fail deb-root "$(tail -5 "$logs/apt.log")"; t_summary; exit 1; }
	touch "$base/.ready"
fi

# This run's root: an overlay of the cached one.
rm -rf --one-file-system "$run"
mkdir -p "$run/upper" "$run/work" "$dir"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$dir"
mount -t proc proc "$dir/proc"
mount --rbind /dev "$dir/dev"
mount --make-rslave "$dir/dev"
in_root() {
	chroot "$dir" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
mkdir -p "$dir/tmp/debs"
cp "${debs[@]}" "$dir/tmp/debs/"
# The packages as the root sees them (no shell there expands a pattern).
D_LIB=/tmp/debs/${debs[0]##*/}
D_XOM=/tmp/debs/${debs[1]##*/}
D_ENABLE=/tmp/debs/${debs[2]##*/}

# The file list that purge must give back: every path, its type, mode and
# owner, but for dpkg's and apt's own state and logs.
file_list() {
	in_root find / -xdev \( -path /var/log -o -path /var/lib/dpkg -o -path /var/cache/apt \
		-o -path /var/lib/apt -o -path /tmp -o -path /var/cache/debconf \) -prune \
		-o -printf '%p %y %m %u\n' | sort
}
file_list >"$run/before"

# dpkg_state PKG...: each package's status, one word a line.
dpkg_state() { in_root dpkg-query -W -f='${db:Status-Status}\n' "$@" 2>/dev/null || true; }
preload() { cat "$dir/etc/ld.so.preload" 2>/dev/null || true; }
LIB=/usr/lib/xom/libxom.so

# install
echo "== install"
rc=0
in_root apt-get install -y -q "$D_LIB" "$D_XOM" "$D_ENABLE" \
	>"$logs/install.log" 2>&1 || rc=$?
st=$(dpkg_state libxom xom xom-enable | sort -u)
t_check deb-install '[ $rc = 0 ] && [ "$st" = installed ]' "rc $rc, states [$st]: $(tail -5 "$logs/install.log")"
t_check deb-preload '[ "$(preload)" = $LIB ]' "ld.so.preload: [$(preload)]"

# A program runs; without keys the runtime says so in one line.
rc=0
# (chroot straight to the program: env there would be a program too.)
chroot "$dir" /bin/echo hello >"$run/out" 2>"$run/err" || rc=$?
if grep -qw pku /proc/cpuinfo; then
	t_check deb-runs '[ $rc = 0 ] && [ "$(cat "$run/out")" = hello ] && [ ! -s "$run/err" ]' \
		"rc $rc, out [$(cat "$run/out")], err [$(cat "$run/err")]"
else
	t_check deb-runs '[ $rc = 0 ] && [ "$(cat "$run/out")" = hello ] &&
		[ "$(cat "$run/err")" = "xom: this CPU has no memory protection keys (PKU); running unprotected" ]' \
		"rc $rc, out [$(cat "$run/out")], err [$(cat "$run/err")]"
fi

# The dynamic linker loaded the runtime into it.
chroot "$dir" /bin/cat /proc/self/maps >"$run/maps" 2>/dev/null || true
t_check deb-loaded 'grep -q " $LIB$" "$run/maps"' "cat's mappings: $(grep -c . "$run/maps") lines, none of $LIB"

# The store: the shipped profile, and a current plan for libc.
in_root xom cache stats --list >"$run/stats" 2>&1 || true
prof=$(sed -n 's/^program \([0-9a-f][0-9a-f]*\) .*/\1/p' profiles/*.profile | head -1)
t_check deb-store '[ -s "$dir/var/cache/xom/profiles/$prof" ] && [ -s "$dir/usr/lib/xom/profiles/$prof" ] &&
	grep -q "current.*/usr/lib/x86_64-linux-gnu/libc.so.6" "$run/stats"' \
	"profile $prof: $(ls "$dir/var/cache/xom/profiles" 2>&1 | tr '\n' ' '); stats: $(grep -c . "$run/stats") lines, $(grep libc.so "$run/stats" | head -2)"

# upgrade: the same version over itself, then after the administrator took
# the entry out (xom disable --system), which must stay out.
echo "== upgrade"
rc=0
in_root dpkg -i "$D_LIB" "$D_XOM" "$D_ENABLE" \
	>"$logs/upgrade.log" 2>&1 || rc=$?
t_check deb-upgrade '[ $rc = 0 ] && [ "$(dpkg_state libxom xom xom-enable | sort -u)" = installed ] &&
	[ "$(preload)" = $LIB ]' "rc $rc, ld.so.preload [$(preload)]: $(tail -5 "$logs/upgrade.log")"
in_root xom disable --system >>"$logs/upgrade.log" 2>&1 || true
rc=0
in_root dpkg -i "$D_ENABLE" >>"$logs/upgrade.log" 2>&1 || rc=$?
t_check deb-upgrade-keeps-disabled '[ $rc = 0 ] && [ ! -e "$dir/etc/ld.so.preload" ]' \
	"rc $rc, ld.so.preload [$(preload)]"
in_root xom enable --system --force >>"$logs/upgrade.log" 2>&1 || true

# trigger: a package that installs a small library.
echo "== trigger"
pk=$run/xomtrig
mkdir -p "$pk/DEBIAN" "$pk/usr/lib/x86_64-linux-gnu"
printf 'int xomtrig(int x) { return x * 3 + 1; }\n' >"$run/xomtrig.c"
gcc -shared -fPIC -O2 -Wl,-soname,libxomtrig.so.1 -o "$pk/usr/lib/x86_64-linux-gnu/libxomtrig.so.1" "$run/xomtrig.c"
cat >"$pk/DEBIAN/control" <<EOF
Package: xomtrig
Version: 1.0
Architecture: amd64
Maintainer: xom tests <tests@example.org>
Description: a library for make check-deb's trigger test
EOF
dpkg-deb --root-owner-group --build "$pk" "$dir/tmp/debs/xomtrig.deb" >/dev/null
rc=0
in_root dpkg -i /tmp/debs/xomtrig.deb >"$logs/trigger.log" 2>&1 || rc=$?
in_root xom cache stats --list >"$run/stats" 2>&1 || true
t_check deb-trigger '[ $rc = 0 ] && grep -q "current.*/usr/lib/x86_64-linux-gnu/libxomtrig.so.1" "$run/stats"' \
	"rc $rc: $(grep -i xom "$logs/trigger.log" | tail -3); stats: $(grep xomtrig "$run/stats")"
# What the trigger runs, on a store that is current: no program is listed
# again (the store keeps the listings), and no plan is made.
in_root xom cache build --system >"$run/again" 2>&1 || true
in_root xom cache build --system >"$run/again" 2>&1 || true
t_check deb-store-current 'grep -Eq "^xom: 0 plans built .*; start-ups: 0 listed, [1-9][0-9]* unchanged$" "$run/again"' \
	"$(cat "$run/again")"
in_root dpkg -P xomtrig >>"$logs/trigger.log" 2>&1 || true

# remove xom-enable: its entry goes, another stays.
echo "== remove"
printf '/usr/lib/x86_64-linux-gnu/libz.so.1\n%s\n' "$LIB" >"$dir/etc/ld.so.preload"
rc=0
in_root apt-get remove -y -q xom-enable >"$logs/remove.log" 2>&1 || rc=$?
t_check deb-remove-enable '[ $rc = 0 ] && [ "$(preload)" = /usr/lib/x86_64-linux-gnu/libz.so.1 ]' \
	"rc $rc, ld.so.preload [$(preload)]: $(tail -3 "$logs/remove.log")"
rm -f "$dir/etc/ld.so.preload"
# Installed again after a removal, xom-enable enables again; a removal of
# libxom that forces past xom-enable's dependency leaves no entry behind.
rc=0
in_root dpkg -i "$D_ENABLE" >>"$logs/remove.log" 2>&1 || rc=$?
t_check deb-reinstall-enables '[ $rc = 0 ] && [ "$(preload)" = $LIB ]' "rc $rc, ld.so.preload [$(preload)]"
rc=0
pre=$(preload)
in_root dpkg -r --force-depends libxom >>"$logs/remove.log" 2>&1 || rc=$?
t_check deb-remove-lib-first '[ $rc = 0 ] && [ "$pre" = $LIB ] && [ ! -e "$dir$LIB" ] && ! grep -qF "$LIB" "$dir/etc/ld.so.preload" 2>/dev/null' \
	"rc $rc, before [$pre], ld.so.preload [$(preload)]: $(tail -3 "$logs/remove.log")"
in_root dpkg -i "$D_LIB" >>"$logs/remove.log" 2>&1 || true

# remove all, then purge: nothing of xom's is left.
rc=0
in_root apt-get remove -y -q xom-enable xom libxom >>"$logs/remove.log" 2>&1 || rc=$?
t_check deb-remove '[ $rc = 0 ] && [ ! -e "$dir/usr/lib/xom" ] && [ ! -e "$dir/usr/bin/xom" ] &&
	[ -e "$dir/etc/xom.conf" ] && [ ! -e "$dir/etc/ld.so.preload" ]' \
	"rc $rc: $(tail -3 "$logs/remove.log"); $(ls -d "$dir/usr/lib/xom" "$dir/etc/xom.conf" "$dir/etc/ld.so.preload" 2>&1 | tr '\n' ' ')"
echo "== purge"
rc=0
# dpkg, not apt: xom-enable, which has no conffiles and no postrm, is
# gone already, and apt no longer knows it.
in_root dpkg --purge xom-enable xom libxom >"$logs/purge.log" 2>&1 &&
	in_root apt-get autoremove --purge -y -q >>"$logs/purge.log" 2>&1 || rc=$?
file_list >"$run/after"
t_check deb-purge '[ $rc = 0 ] && cmp -s "$run/before" "$run/after" && [ -z "$(dpkg_state libxom xom xom-enable)" ]' \
	"rc $rc, states [$(dpkg_state libxom xom xom-enable | tr '\n' ' ')], left or changed: $(diff "$run/before" "$run/after" | grep '^[<>]' | head -8 | tr '\n' ' ')"

umount_all
rm -rf --one-file-system "$run"
echo "check-deb: $(($(date +%s) - t0)) s"
t_summary
