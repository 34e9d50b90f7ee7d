#!/bin/bash
# Proves that the tree builds, passes and protects on Debian 13 "trixie" as
# well as on the Debian 12 it is developed on.  It keeps a minimal trixie
# (debootstrap --variant=minbase, plus make and git, as a new user would
# have) in build/debian13/root, made once and reused, clones the current
# commit of this checkout into it, and runs there through chroot, as root:
#
#   make          the build (the static xom-plan among it)
#   make quick    the native suites
#   make asan     the scanner and its tests under ASan and UBSan
#   make demo     the code-disclosure demo
#   make check-vm the emulated-PKU suite, whose guest boots trixie's own
#                 kernel (6.12); QEMU's emulated CPU needs no KVM, so it
#                 runs in the chroot too
#   make check-deb
#                 the packages built, installed, upgraded, removed and
#                 purged in a minimal trixie root of their own
#   make check-stock
#                 a stock trixie system with the packages installed,
#                 booted whole under emulated protection keys
#   make check    all of the above but the demo, as the README's command
#   user          make quick as a user who is not root, in a clone of
#                 their own (run it after a step that installed the packages)
#
#   tests/debian13.sh [--fresh] [STEP...]
#
# STEP names some of the steps above (build quick asan demo vm deb stock
# check user; default: demo check user); the build always runs.  --fresh deletes
# the cached root first, so that the packages that `make` installs on first
# use are installed again, as on a new machine.  Logs go to
# build/debian13/logs/.  Needs root and the Debian mirror (MIRROR, default:
# the one this machine's apt uses for Debian).
# Not part of `make check`: it installs a system and runs every suite again.
# Only committed work is tested: the clone is of HEAD, not of the working
# tree.
set -euo pipefail

fresh=0
while [ $# -gt 0 ]; do
	case $1 in
	--fresh) fresh=1; shift ;;
	-h|--help) sed -n '2,/^set -e/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-*) echo "debian13: unknown option '$1'" >&2; exit 64 ;;
	*) break ;;
	esac
done
steps=${*:-demo check user}
for s in $steps; do
	case $s in build|quick|asan|demo|vm|deb|stock|check|user) ;; *) echo "debian13: unknown step '$s' (build quick asan demo vm deb stock check user)" >&2; exit 64 ;; esac
done
[ "$(id -u)" = 0 ] || { echo "debian13: needs root (debootstrap, chroot, mount)" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
rev=$(git -C "$repo" rev-parse --short HEAD)
top=$repo/build/debian13
dir=$top/root
logs=$top/logs
# The mirror this machine's apt reads Debian from serves trixie as well.
host_uri() {
	apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 2>/dev/null |
		awk -v s="$1" '$1 ~ s { sub("/$", "", $2); print $2; exit }'
}
mirror=${MIRROR:-$(host_uri '^[a-z]+$')}
mirror=${mirror:-http://deb.debian.org/debian}
security=${SECURITY_MIRROR:-$(host_uri '-security$')}
security=${security:-http://deb.debian.org/debian-security}
mkdir -p "$logs"
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
	echo "debian13: note: uncommitted changes in $repo are not tested (the clone is of $rev)"

# Unmounts what this run mounted below the root; the root itself stays.
umount_all() {
	local m
	for m in dev sys proc; do
		if mountpoint -q "$dir/$m" 2>/dev/null; then
			umount -R "$dir/$m" 2>/dev/null || umount -lR "$dir/$m" 2>/dev/null || true
		fi
	done
	if mountpoint -q "$dir" 2>/dev/null; then
		umount "$dir" 2>/dev/null || umount -l "$dir" 2>/dev/null || true
	fi
}
trap umount_all EXIT
# A run that was killed may have left its mounts: never delete through them.
umount_all

stamp() { date +%s; }
t_start=$(stamp)
# The chroot gets a clean environment: nothing of the caller's PATH, tools
# or variables may help it.
in_chroot() {
	chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

if [ "$fresh" = 1 ] && [ -e "$dir" ]; then
	findmnt -rn -o TARGET | grep -q "^$dir/" && { echo "debian13: $dir still has mounts" >&2; exit 1; }
	rm -rf --one-file-system "$dir"
fi
if [ ! -x "$dir/usr/bin/make" ] || [ ! -x "$dir/usr/bin/git" ]; then
	command -v debootstrap >/dev/null || {
		apt-get update -qq || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
	}
	# A root that a killed run left half made is made again.
	rm -rf --one-file-system "$dir.new" "$dir"
	echo "== debootstrap --variant=minbase trixie $mirror"
	debootstrap --variant=minbase trixie "$dir.new" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$logs/debootstrap.log"; exit 1; }
	# What a Debian 13 installation has: the release, its updates and
	# security.
	rm -f "$dir.new/etc/apt/sources.list"
	cat >"$dir.new/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	# No package may start a daemon from inside the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$dir.new/usr/sbin/policy-rc.d"
	chmod 755 "$dir.new/usr/sbin/policy-rc.d"
	chmod 755 "$dir.new"
	mv "$dir.new" "$dir"
fi
cp /etc/resolv.conf "$dir/etc/resolv.conf"
# The root is a mount of its own, so that `unshare -m` works in it (the
# tests of secure execution make a private mount namespace).
mount --bind "$dir" "$dir"
mount --make-private "$dir"
mount -t proc proc "$dir/proc"
mount -t sysfs sysfs "$dir/sys"
mount --rbind /dev "$dir/dev"
mount --make-rslave "$dir/dev"

if [ ! -x "$dir/usr/bin/make" ] || [ ! -x "$dir/usr/bin/git" ]; then
	echo "== apt-get install make git"
	in_chroot apt-get update -qq >"$logs/apt.log" 2>&1
	in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make git >>"$logs/apt.log" 2>&1 ||
		{ tail -n 20 "$logs/apt.log"; exit 1; }
fi
echo "== Debian $(cat "$dir/etc/debian_version"), $(in_chroot dpkg-query -W -f='${binary:Package}\n' | wc -l) packages installed"

echo "== git clone ($rev) into /root/xom"
rm -rf --one-file-system "$dir/root/xom"
git clone -q --no-hardlinks "$repo" "$dir/root/xom"
git -C "$dir/root/xom" checkout -q --detach "$rev"

status=0
# run NAME COMMAND: runs COMMAND in the clone, logs it, prints its summary
# lines ("N passed, N failed, N skipped" and the failures).
run() {
	local name=$1 t0 rc
	shift
	echo "== $* (in the chroot)"
	t0=$(stamp)
	set +e
	in_chroot bash -c "cd /root/xom && $*" >"$logs/$name.log" 2>&1
	rc=$?
	set -e
	echo "   exit status $rc, $(($(stamp) - t0)) s; log: build/debian13/logs/$name.log"
	grep -E '^(not ok|FAIL)|[0-9]+ passed, [0-9]+ failed' "$logs/$name.log" | tail -n 40 | sed 's/^/   | /' || true
	if [ "$rc" != 0 ]; then
		status=1
		tail -n 15 "$logs/$name.log" | sed 's/^/   : /'
	fi
}
run build make
for s in $steps; do
	case $s in
	quick) run quick make quick ;;
	asan) run asan make asan ;;
	demo) run demo make demo; tail -n 12 "$logs/demo.log" | sed 's/^/   | /' ;;
	vm) run vm make check-vm ;;
	deb) run deb make check-deb ;;
	stock) run stock make check-stock ;;
	check) run check make check ;;
	user)
		# A user of their own, with a clone of their own: nothing of
		# root's build may help.
		in_chroot sh -c 'id xomuser >/dev/null 2>&1 || useradd -m -s /bin/sh xomuser'
		rm -rf --one-file-system "$dir/home/xomuser/xom"
		git clone -q --no-hardlinks "$repo" "$dir/home/xomuser/xom"
		git -C "$dir/home/xomuser/xom" checkout -q --detach "$rev"
		in_chroot chown -R xomuser: /home/xomuser/xom
		run user "cd /home/xomuser/xom && runuser -u xomuser -- env HOME=/home/xomuser make quick"
		;;
	esac
done
echo "== Debian 13: $([ $status = 0 ] && echo passed || echo FAILED) in $(($(stamp) - t_start)) s"
exit $status
