#!/bin/bash
# Proves what the README promises: on a fresh, minimal Debian 12 with only
# `make` and `git` added, `make demo` and `make check` work.  It builds such
# a system with `debootstrap --variant=minbase bookworm`, clones the current
# branch of this checkout into it, and runs both commands there through
# chroot, as root, the way a new user would.  QEMU's emulated CPU needs no
# KVM, so the emulated-PKU suite runs in the chroot too.
#
#   tests/fresh-debian.sh [--keep] [DIR]
#
# DIR (default: a new folder under /var/tmp) must not exist yet; it is
# deleted at the end unless --keep is given.  The logs are copied to
# build/fresh-debian/ of this checkout.  Needs root and the Debian mirror
# (MIRROR, default http://deb.debian.org/debian; SECURITY_MIRROR likewise).
# Takes about half an hour (make check, and the packages it installs).
# Not part of `make check`: it installs a system.
# Only committed work is tested: the clone is of the branch, not of the
# working tree.
set -euo pipefail

keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--keep) keep=1; shift ;;
	-h|--help) sed -n '2,/^set -e/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;;
	-*) echo "fresh-debian: unknown option '$1'" >&2; exit 64 ;;
	*) break ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "fresh-debian: needs root (debootstrap, chroot, mount)" >&2; exit 2; }

repo=$(cd "$(dirname "$0")/.." && pwd)
branch=$(git -C "$repo" symbolic-ref --short HEAD)
rev=$(git -C "$repo" rev-parse --short HEAD)
mirror=${MIRROR:-http://deb.debian.org/debian}
security=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
dir=${1:-$(mktemp -d /var/tmp/xom-fresh.XXXXXX)}
logs=$repo/build/fresh-debian
[ -z "$(ls -A "$dir" 2>/dev/null)" ] || { echo "fresh-debian: $dir is not empty" >&2; exit 2; }
mkdir -p "$dir" "$logs"
dir=$(cd "$dir" && pwd)
# The new system's /, which mktemp made 0700: as on any machine, every
# user must be able to enter it (the suites run programs as nobody).
chmod 755 "$dir"
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
	echo "fresh-debian: note: uncommitted changes in $repo are not tested (the clone is of $branch at $rev)"

# Unmounts everything below the new system; it must be gone before the
# folder is deleted, or the deletion would reach the host's /dev.
cleanup() {
	local m
	for m in dev sys proc; do
		mountpoint -q "$dir/$m" && umount -R "$dir/$m" 2>/dev/null || umount -lR "$dir/$m" 2>/dev/null || true
	done
	if [ "$keep" = 0 ]; then
		if findmnt -rn -o TARGET | grep -q "^$dir/"; then
			echo "fresh-debian: $dir still has mounts; not deleting it" >&2
		else
			rm -rf --one-file-system "$dir"
		fi
	else
		echo "fresh-debian: kept $dir"
	fi
}
trap cleanup EXIT

stamp() { date +%s; }
t_start=$(stamp)
# The chroot gets a clean environment: nothing of the caller's PATH, tools
# or variables may help it.
in_chroot() {
	chroot "$dir" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

echo "== debootstrap --variant=minbase bookworm $dir $mirror"
command -v debootstrap >/dev/null || {
	apt-get update -qq || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
}
debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$logs/debootstrap.log"; exit 1; }

# What a Debian 12 installation has: the release, its updates and security.
rm -f "$dir/etc/apt/sources.list"
cat >"$dir/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
cp /etc/resolv.conf "$dir/etc/resolv.conf"
# No package may start a daemon from inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
chmod 755 "$dir/usr/sbin/policy-rc.d"
mount -t proc proc "$dir/proc"
mount -t sysfs sysfs "$dir/sys"
mount --rbind /dev "$dir/dev"
mount --make-rslave "$dir/dev"

echo "== apt-get install make git"
in_chroot apt-get update -qq >"$logs/apt.log" 2>&1
in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make git >>"$logs/apt.log" 2>&1 ||
	{ tail -n 20 "$logs/apt.log"; exit 1; }
echo "   $(in_chroot dpkg-query -W -f='${binary:Package}\n' | wc -l) packages installed"

echo "== git clone --branch $branch ($rev) into /root/xom"
git clone -q --no-hardlinks --branch "$branch" "$repo" "$dir/root/xom"
git -C "$dir/root/xom" reset -q --hard "$rev"

status=0
# run NAME COMMAND: runs COMMAND in the clone, logs it, prints its summary.
run() {
	local name=$1 t0 rc
	shift
	echo "== $* (in the chroot)"
	t0=$(stamp)
	set +e
	in_chroot bash -c "cd /root/xom && $*" >"$logs/$name.log" 2>&1
	rc=$?
	set -e
	echo "   exit status $rc, $(($(stamp) - t0)) s; log: build/fresh-debian/$name.log"
	[ "$rc" = 0 ] || status=1
}
# The user's plan cache, as a list of its files, sizes and times.
user_cache() { { find "$dir/root/.cache/xom" -printf '%P %s %T@\n' 2>/dev/null || true; } | sort; }
packages() { in_chroot dpkg-query -W -f='${binary:Package}\n' | wc -l; }
n0=$(packages)
run demo make demo
tail -n 12 "$logs/demo.log" | sed 's/^/   | /'
# The demo installs what the build and QEMU need, not the suite's guest.
n1=$(packages)
echo "   make demo installed $((n1 - n0)) packages"
grep -q "attack failed" "$logs/demo.log" ||
	{ echo "   FAIL: make demo did not show the attack blocked"; status=1; }
# make demo is the user's own run: where the CPU has PKU it runs natively
# and may fill the user's cache.  make check must leave it as it was.
before=$(user_cache)
run check make check
sed -n '/^== summary$/,$p' "$logs/check.log" | sed 's/^/   | /'
[ "$status" = 0 ] || tail -n 40 "$logs/check.log" | sed 's/^/   | /'
if [ "$(user_cache)" != "$before" ]; then
	echo "   FAIL: the tests wrote into the user's plan cache (/root/.cache/xom)"
	status=1
fi
echo "== fresh Debian 12: $([ $status = 0 ] && echo passed || echo FAILED) in $(($(stamp) - t_start)) s"
exit $status
