#!/bin/sh
# xom in a container, in the emulated-PKU guest (tests/vm/guest-services.list,
# the boot whose PID 1 is systemd): docs/services.md's container recipe builds an
# image, and a real OCI runtime, Debian 12's crun, runs it under the default
# seccomp profiles of Debian 12's container engines (tests/vm/fetch-seccomp,
# turned into the OCI form by tests/vm/seccomp-oci.py as the engines do).
# Usage: tests/cmd/guest-container.sh PART, the parts in order:
#   recipe  the image: a few programs with their libraries, and xom as
#           `make install install-system DESTDIR=... PREFIX=/usr/local` lays it out (vm.mk
#           runs that on the host into build/tests/install); then the
#           recipe's steps as docs/services.md writes them: /proc mounted, xom
#           cache build --system and xom enable --system through chroot
#   run     crun runs the image's programs.  Under Podman's profile
#           (containers-common) xom protects them.  Under Docker's (Debian
#           12's docker.io 20.10), which does not list the pkey calls and
#           answers EPERM, each says in one line that a seccomp filter
#           refuses pkey_alloc and is protected by the kernel's own
#           execute-only key instead, require=1 included; with the three
#           calls added, as docs/services.md says, xom's key protects them with no
#           line.  Podman's without them answers ENOSYS.
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
. tests/lib.sh
B=$PWD/build
W=/tmp/xom-container
R=$W/rootfs
INST=$B/tests/install
SC=$B/tests/container/seccomp
# Debian's python3 is python3.11 on Debian 12 and python3.13 on Debian 13.
PY=$(readlink -f /usr/bin/python3)
LIB=/usr/local/lib/xom/libxom.so
unset XOM_OPTIONS LD_PRELOAD LD_AUDIT
part=${1:-}
err() { tail -c 400 "$W/err" | tr '\n' '|'; }

# image_add FILE...: copies each program into the image with every library
# that the dynamic linker says it needs (the guest has no ldd).
image_add() {
	for f in "$@"; do
		for g in "$f" $(/lib64/ld-linux-x86-64.so.2 --list "$f" |
			awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 != "=>" { print $1 }'); do
			mkdir -p "$R$(dirname "$g")" && cp -L "$g" "$R$g" || return 1
		done
	done
}

# contain NAME PROFILE-ARGS -- ENV... -- ARGS...: runs ARGS in a container
# of the image under the seccomp profile that seccomp-oci.py makes of
# PROFILE-ARGS, with ENV ("K=V" words) added; stdout in $W/NAME.out,
# stderr in $W/NAME.err, the status in rc.
contain() {
	name=$1; shift
	prof=""; while [ "$1" != -- ]; do prof="$prof $1"; shift; done; shift
	env='"PATH=/usr/local/bin:/usr/bin:/bin"'
	while [ "$1" != -- ]; do env="$env, \"$1\""; shift; done; shift
	args=""; for a in "$@"; do args="$args${args:+, }\"$a\""; done
	b=$W/bundle-$name
	rm -rf "$b" && mkdir -p "$b"
	# shellcheck disable=SC2086
	$PY -S tests/vm/seccomp-oci.py $prof >"$b/seccomp.json" || { rc=99; return; }
	# Docker's shape: its own namespaces, proc, a private /dev and /tmp,
	# Docker's default capabilities, the profile.  --no-pivot below: the
	# guest's root is the initramfs, which pivot_root cannot leave.
	caps='"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"'
	cat >"$b/config.json" <<-EOF
	{"ociVersion": "1.0.2",
	 "process": {"terminal": false, "user": {"uid": 0, "gid": 0}, "cwd": "/",
	  "args": [$args], "env": [$env],
	  "capabilities": {"bounding": [$caps], "effective": [$caps], "permitted": [$caps]}},
	 "root": {"path": "$R"}, "hostname": "xom-container",
	 "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
	  {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "mode=755"]},
	  {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}],
	 "linux": {"namespaces": [{"type": "pid"}, {"type": "mount"}, {"type": "ipc"}, {"type": "uts"}],
	  "seccomp": $(cat "$b/seccomp.json")}}
	EOF
	(cd "$b" && crun run --no-pivot "xom-$name") >"$W/$name.out" 2>"$W/$name.err" </dev/null
	rc=$?
}

case $part in
recipe)
	rm -rf "$W" && mkdir -p "$R"
	# The image: merged /usr as on Debian, and a few programs.
	mkdir -p "$R/usr/bin" "$R/usr/lib" "$R/usr/lib64" "$R/usr/sbin" "$R/etc" \
		"$R/proc" "$R/dev" "$R/tmp" "$R/var"
	for d in bin lib lib64 sbin; do ln -s "usr/$d" "$R/$d"; done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$R/etc/passwd"
	image_add /usr/bin/dash /usr/bin/cat /usr/bin/sha256sum /usr/bin/sleep ||
		{ t_fail container-image "cannot copy the programs into the image"; t_summary; exit 1; }
	# make install install-system DESTDIR=rootfs PREFIX=/usr/local, made on the host.
	[ -x "$INST/usr/local/bin/xom" ] && [ -s "$INST$LIB" ] ||
		{ t_fail container-image "no $INST: vm.mk's make install DESTDIR did not run"; t_summary; exit 1; }
	cp -a "$INST/." "$R/" && image_add "$R/usr/local/bin/xom" "$R/usr/local/lib/xom/libxom-scan.so" "$R$LIB"
	t_check container-image '[ -x $R/usr/local/bin/xom ] && [ -x $R/usr/local/lib/xom/xom-plan ] && [ -s $R/etc/xom.conf ] && [ -x $R/usr/bin/dash ]' "$(ls -R $R | head -40 | tr '\n' ' ')"
	# The recipe, as written: a chroot has no /proc and no /dev, which a
	# container build's RUN has.
	mount -t proc proc "$R/proc" && mount --bind /dev "$R/dev" ||
		{ t_fail recipe-mounts "cannot mount /proc and /dev in the image"; t_summary; exit 1; }
	chroot "$R" /usr/local/bin/xom cache build --system >"$W/out" 2>"$W/err"
	rc=$?
	echo "# $(tail -n 1 "$W/err")"
	t_check recipe-store '[ $rc = 0 ] && [ -s $R/var/cache/xom/plans ] && [ "$(stat -c %u:%a $R/var/cache/xom)" = 0:755 ]' "rc $rc: $(err)"
	chroot "$R" /usr/local/bin/xom enable --system >"$W/out" 2>"$W/err"
	rc=$?
	umount "$R/proc" "$R/dev"
	t_check recipe-enable '[ $rc = 0 ] && [ "$(cat $R/etc/ld.so.preload)" = "$LIB" ] && has $W/err "checked: /usr/bin/cat runs with $LIB preloaded and maps it"' "rc $rc: $(err)"
	;;

run)
	[ -s "$R/etc/ld.so.preload" ] || { t_fail container-run "no image: the recipe part did not pass"; t_summary; exit 1; }
	[ -s "$SC/docker.json" ] && [ -s "$SC/podman.json" ] ||
		{ t_fail container-run "no seccomp profiles in $SC (tests/vm/fetch-seccomp)"; t_summary; exit 1; }
	sed 's/^/# seccomp profile: /' "$SC/versions"
	pk=pkey_alloc,pkey_free,pkey_mprotect
	# What the programs print without xom, outside any container.
	ref=$(cd "$R" && /usr/bin/sha256sum etc/xom.conf usr/bin/dash)

	# ---- Podman's default profile allows the pkey calls ------------------------
	contain podman "$SC/podman.json" -- -- /usr/bin/cat /proc/self/smaps
	nc=$(xo_pages "$W/podman.out" /usr/bin/cat) nl=$(xo_pages "$W/podman.out" libc.so.6)
	t_check container-podman-protected '[ $rc = 0 ] && [ "$nc" -gt 0 ] && [ "$nl" -gt 0 ] && ! [ -s $W/podman.err ]' "rc $rc, execute-only pages: cat $nc, libc $nl: $(head -c 300 $W/podman.err)"
	contain podman-same "$SC/podman.json" -- -- /bin/dash -c 'cd / && /usr/bin/sha256sum etc/xom.conf usr/bin/dash'
	t_check container-podman-same-output '[ $rc = 0 ] && [ "$(cat $W/podman-same.out)" = "$ref" ] && ! [ -s $W/podman-same.err ]' "rc $rc: $(cat $W/podman-same.out $W/podman-same.err | tr '\n' '|')"
	# No plan was made in the container: the image's store had them all.
	t_check container-store-used '! [ -e $R/root/.cache/xom ] && ! grep -q scanning $W/podman.err $W/podman-same.err' "$(ls -a $R/root 2>&1 | tr '\n' ' ')"

	# ---- Docker's default profile: Debian 12's docker.io (20.10) does not list
	# the pkey calls, so they fail with EPERM; Debian 13's (26.1) lists them.
	# Where it does, xom protects there, and the refused case is the same
	# profile without them.
	refuse=""
	if grep -q '"pkey_alloc"' "$SC/docker.json"; then
		refuse="--without $pk"
		contain docker-default "$SC/docker.json" -- -- /usr/bin/cat /proc/self/smaps
		nc=$(xo_pages "$W/docker-default.out" /usr/bin/cat) nl=$(xo_pages "$W/docker-default.out" libc.so.6)
		t_check container-docker-default-protected '[ $rc = 0 ] && [ "$nc" -gt 0 ] && [ "$nl" -gt 0 ] && ! [ -s $W/docker-default.err ]' "rc $rc, execute-only pages: cat $nc, libc $nl: $(head -c 300 $W/docker-default.err)"
	fi
	# Refused, the kernel's own execute-only key protects the same pages
	# instead (loader/kernkey.c), with one line per process.
	line="xom: pkey_alloc is refused (not permitted, errno 1) by a seccomp filter (a container runtime's profile, or a service manager's); xom makes code execute-only with the kernel's own execute-only key (key 1) instead, by mprotect(PROT_EXEC)"
	contain docker "$SC/docker.json" $refuse -- -- /usr/bin/cat /proc/self/smaps
	nc=$(xo_pages "$W/docker.out" /usr/bin/cat) nl=$(xo_pages "$W/docker.out" libc.so.6)
	t_check container-docker-kernel-key '[ $rc = 0 ] && [ "$nc" -gt 0 ] && [ "$nl" -gt 0 ] && [ "$(cat $W/docker.err)" = "$line" ]' "rc $rc, execute-only pages: cat $nc, libc $nl: $(head -c 300 $W/docker.err)"
	contain docker-same "$SC/docker.json" $refuse -- -- /bin/dash -c 'cd / && /usr/bin/sha256sum etc/xom.conf usr/bin/dash'
	t_check container-docker-same-output '[ $rc = 0 ] && [ "$(cat $W/docker-same.out)" = "$ref" ] && [ "$(sort -u $W/docker-same.err)" = "$line" ]' "rc $rc: $(cat $W/docker-same.out $W/docker-same.err | tr '\n' '|')"
	contain docker-require "$SC/docker.json" $refuse -- XOM_OPTIONS=require=1 -- /usr/bin/cat /etc/xom.conf
	t_check container-docker-require-runs '[ $rc = 0 ] && cmp -s $W/docker-require.out $R/etc/xom.conf && [ "$(cat $W/docker-require.err)" = "$line" ]' "rc $rc: $(head -c 300 $W/docker-require.err)"

	# ---- the same profile with the three calls allowed, as docs/services.md says -------
	contain docker-fixed "$SC/docker.json" --allow $pk -- -- /usr/bin/cat /proc/self/smaps
	nc=$(xo_pages "$W/docker-fixed.out" /usr/bin/cat) nl=$(xo_pages "$W/docker-fixed.out" libc.so.6)
	t_check container-docker-allowed-protected '[ $rc = 0 ] && [ "$nc" -gt 0 ] && [ "$nl" -gt 0 ] && ! [ -s $W/docker-fixed.err ]' "rc $rc, execute-only pages: cat $nc, libc $nl: $(head -c 300 $W/docker-fixed.err)"

	# ---- a profile that answers unknown calls with ENOSYS ---------------------------
	contain enosys "$SC/podman.json" --without $pk -- -- /usr/bin/cat /proc/self/smaps
	nc=$(xo_pages "$W/enosys.out" /usr/bin/cat) nl=$(xo_pages "$W/enosys.out" libc.so.6)
	t_check container-enosys-kernel-key '[ $rc = 0 ] && [ "$nc" -gt 0 ] && [ "$nl" -gt 0 ] && [ "$(cat $W/enosys.err)" = "$(echo "$line" | sed "s/not permitted, errno 1/not implemented, errno 38/")" ]' "rc $rc, execute-only pages: cat $nc, libc $nl: $(head -c 300 $W/enosys.err)"
	;;
*)
	echo "usage: guest-container.sh recipe|run" >&2
	exit 2
	;;
esac
t_summary
