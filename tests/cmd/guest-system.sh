#!/bin/sh
# xom for every program, through /etc/ld.so.preload, in the emulated-PKU
# guest (tests/vm/guest-system.list, a boot of its own): xom installed
# from make deb's packages with dpkg, as an operator would (tests/vm/run
# puts them in /xom/vm/deb, with a dpkg database that holds the host's
# records of what they depend on), their maintainer scripts building the
# system plan store and listing libxom.so in /etc/ld.so.preload, then
# "services" started as an init script would start them.  Usage:
# tests/cmd/guest-system.sh PART, the parts in order (each under the
# guest's per-program limit; they share /tmp/xom-system):
#   install  dpkg -i libxom and xom: xom's postinst builds the system
#            store for every program and library of the guest
#   boot     dpkg -i xom-enable, whose postinst enables; every program
#            prints what it printed without xom, no plan is made outside
#            the store, xom.conf's off and its invalid rule, a
#            set-user-ID program ignores the caller's path options, and
#            every process running at the end is protected, counted from
#            /proc/*/smaps
#   recover  xom disable restores a run without xom, and xom-enable's
#            reinstall keeps that choice; removing xom-enable takes the
#            entry out; a missing, a non-ELF and a truncated library
#            listed in /etc/ld.so.preload
# The guest's /bin is static busybox, which no preload reaches: it is the
# harness, and the rescue shell.
set -u
cd /xom 2>/dev/null || cd "$(dirname "$0")/../.."
. tests/lib.sh
W=/tmp/xom-system
# Where the packages put them.
xom=/usr/bin/xom P=/usr/lib/xom/libxom.so
DEBS=/xom/vm/deb
S=/var/cache/xom
PL=/etc/ld.so.preload
unset XOM_OPTIONS LD_PRELOAD LD_AUDIT
export HOME=$W/home XDG_CACHE_HOME=$W/home/.cache XDG_RUNTIME_DIR=$W/run
export GIT_CONFIG_NOSYSTEM=1
part=${1:-}
err() { tail -c 400 "$W/err" | tr '\n' '|'; }
# Debian's dpkg, by its path: the harness's busybox shell runs its own
# applets first, and busybox has a dpkg applet of its own.
DPKG=/usr/bin/dpkg
# status PKG: dpkg's status of PKG ("install ok installed"), or nothing.
status() { /usr/bin/dpkg-query -W -f='${Status}' "$1" 2>/dev/null; }
# deb NAME: make deb's package NAME.
deb() { ls "$DEBS/$1"_*_amd64.deb 2>/dev/null | head -n 1; }

# Debian's python3 is python3.11 on Debian 12 and python3.13 on Debian 13.
PY=$(readlink -f /usr/bin/python3)
KEY=000102030405060708090a0b0c0d0e0f
GPG="/usr/bin/gpg --homedir $W/gnupg --batch --no-autostart"
# NAME|COMMAND: what each prints must not change under xom.
cmds() {
	echo "dash-script|/usr/bin/dash $W/script.sh"
	echo "bash-script|/usr/bin/bash $W/script.sh"
	echo "coreutils|/usr/bin/seq 1 500 | /usr/bin/sort -r | /usr/bin/head -n 7 | /usr/bin/tr '\n' ,; /usr/bin/cut -d: -f1 $W/data/words | /usr/bin/sort | /usr/bin/uniq -c; /usr/bin/cat $W/data/a | /usr/bin/wc -c; /usr/bin/md5sum $W/data/a; /usr/bin/sha256sum $W/data/a; /usr/bin/ls -l --time-style=+ $W/data; /usr/bin/env -i A=1 /usr/bin/env"
	echo "python3|$PY -S -c 'import hashlib, zlib, json; d = json.dumps({\"a\": list(range(9))}); print(hashlib.sha256(zlib.compress(d.encode())).hexdigest(), json.loads(d))'"
	echo "perl|/usr/bin/perl -e 'my %h = map { \$_ => \$_ ** 2 } 1..20; print join(\",\", map { \"\$_=\$h{\$_}\" } sort { \$a <=> \$b } keys %h), \"\\n\"'"
	echo "openssl|/usr/bin/openssl dgst -sha256 -sha512 $W/data/a; /usr/bin/openssl enc -aes-128-cbc -K $KEY -iv $KEY -in $W/data/a | /usr/bin/openssl enc -d -aes-128-cbc -K $KEY -iv $KEY | /usr/bin/sha256sum"
	echo "gpg|$GPG --print-md SHA256 $W/data/a; $GPG --enarmor <$W/data/a | $GPG --dearmor | /usr/bin/sha256sum"
	echo "git|rm -rf $W/repo && mkdir $W/repo && cp $W/data/a $W/data/words $W/repo/ && cd $W/repo && /usr/bin/git init -q -b main && /usr/bin/git add . && GIT_AUTHOR_DATE=@1000000000 GIT_COMMITTER_DATE=@1000000000 /usr/bin/git -c user.name=x -c user.email=x@example.org commit -q -m one && /usr/bin/git log --format='%H %T' && /usr/bin/git hash-object a"
	echo "tar-xz|/usr/bin/tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C $W -cf - data | /usr/bin/xz -T1 -6 | /usr/bin/xz -d | /usr/bin/tar -tvf -; /usr/bin/tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C $W -cf - data | /usr/bin/xz -T1 -6 | /usr/bin/sha256sum"
}
# run_cmds TAG [NAME...]: runs each command (or those named; from busybox
# sh) into $W/TAG.NAME (stdout, then its exit status) and $W/TAG.NAME.err.
run_cmds() {
	tag=$1; shift
	if [ $# = 0 ]; then cmds; else for c in "$@"; do cmds | grep "^$c|"; done; fi >"$W/cmds"
	while IFS='|' read -r name cmd; do
		sh -c "$cmd" >"$W/$tag.$name" 2>"$W/$tag.$name.err" </dev/null
		echo "exit $?" >>"$W/$tag.$name"
	done <"$W/cmds"
}
# same_as_ref TAG NAME: TAG's output of NAME is the reference one, which
# is not empty and exited 0.
same_as_ref() {
	[ -s "$W/ref.$2" ] && [ "$(tail -n 1 "$W/ref.$2")" = "exit 0" ] &&
		[ "$(wc -l <"$W/ref.$2")" -gt 1 ] && cmp -s "$W/ref.$2" "$W/$1.$2"
}

case $part in
install)
	rm -rf "$W" "$S" && mkdir -p "$W/home" "$W/data" "$W/bin" "$W/gnupg"
	mkdir -m 700 "$W/run"
	chmod 700 "$W/gnupg"
	# Folders that every program may load a library from are root's
	# alone, as on the host (the packages make /usr/lib/xom).
	chmod 755 / /usr /usr/lib
	seq 1 3000 >"$W/data/a"
	printf 'root:x\nbin:y\nroot:z\ndaemon:w\nbin:v\n' >"$W/data/words"
	touch -d @1000000000 "$W/data"/* "$W/data"
	cat >"$W/script.sh" <<-'EOF'
		# A shell script: pipes, subshells, command substitution, a function.
		square() { echo $(( $1 * $1 )); }
		for i in 1 2 3; do square $i; done | /usr/bin/tr '\n' ' '; echo
		( cd /xom/tests && /usr/bin/ls -d cmd vm ) | /usr/bin/sort -r
		n=$(/usr/bin/seq 1 100 | /usr/bin/wc -l); echo "lines $n"
		{ echo b; echo a; } | /usr/bin/sort | /usr/bin/head -n 1
		x=$( ( echo inner ) ); echo "sub $x"
		/usr/bin/cat /nonexistent 2>/dev/null || echo "status $?"
	EOF
	lib=$(deb libxom) cmd=$(deb xom)
	if [ -z "$lib" ] || [ -z "$cmd" ] || [ -z "$(deb xom-enable)" ]; then
		t_fail package-installed "no packages in $DEBS: make deb builds them ($(ls "$DEBS" 2>&1 | tr '\n' ' '))"
		t_summary; exit 1
	fi
	if ! $DPKG --version 2>&1 | grep -q "^Debian 'dpkg' package management program"; then
		t_fail package-installed "$DPKG is not Debian's dpkg: $($DPKG --version 2>&1 | head -n 1)"
		t_summary; exit 1
	fi
	[ ! -e "$xom" ] && [ ! -e "$P" ] && [ -z "$(status xom)" ] || echo "# xom is here before the packages: $(ls -l "$xom" "$P" 2>&1 | tr '\n' ' ') $(status xom)"
	# ---- install, as an operator would: dpkg runs the maintainer scripts
	# and the file triggers; xom's postinst builds the store for every
	# program and library of the guest (xom cache build --system).
	start=$(date +%s)
	$DPKG -i "$lib" "$cmd" >"$W/err" 2>&1
	rc=$?
	echo "# dpkg -i libxom xom in $(( $(date +%s) - start )) s (exit $rc): $(tr '\n' '|' <"$W/err")"
	t_check package-installed '[ $rc = 0 ] && [ "$(status libxom)" = "install ok installed" ] && [ "$(status xom)" = "install ok installed" ] && [ "$($DPKG -S $P)" = "libxom: $P" ] && [ "$($DPKG -S $xom)" = "xom: $xom" ] && [ -x $xom ] && has $W/err "xom: updating the system plan store (xom cache build --system)" && ! grep -q "could not\|failed" $W/err' "rc $rc, libxom '$(status libxom)', xom '$(status xom)': $(err)"
	t_check system-store-built '[ -s $S/plans ] && [ "$(stat -c %u:%a $S)" = 0:755 ] && [ -n "$(ls $S/profiles 2>/dev/null)" ]' "$(ls -la $S 2>&1 | tr '\n' '|')"
	"$xom" cache stats >"$W/out" 2>&1
	t_check system-store-trusted '[ "$(sed -n 1p $W/out)" = "system store  /var/cache/xom" ] && ! grep -q ignored $W/out' "$(tr '\n' '|' <$W/out)"
	;;

boot)
	[ -s "$S/plans" ] || { t_fail system-boot "no store: the store part did not run"; t_summary; exit 1; }
	rm -f $PL /etc/xom.conf
	run_cmds ref
	# ---- enable, as an operator would: install xom-enable, whose
	# postinst runs xom enable --system --force --------------------------------
	[ -z "$(status xom-enable)" ] && [ ! -e $PL ] || t_fail enable-system "before: xom-enable '$(status xom-enable)', $(ls -l $PL 2>&1)"
	$DPKG -i "$(deb xom-enable)" >"$W/err" 2>&1
	rc=$?
	echo "# dpkg -i xom-enable (exit $rc): $(tr '\n' '|' <"$W/err")"
	t_check enable-system '[ $rc = 0 ] && [ "$(status xom-enable)" = "install ok installed" ] && [ "$(cat $PL)" = "$P" ] && [ "$(stat -c %u:%a $PL)" = 0:644 ] && has $W/err "checked: /usr/bin/cat runs with $P preloaded and maps it" && has $W/err "enabled: $PL created, listing $P"' "rc $rc, xom-enable '$(status xom-enable)', $PL: $(cat $PL 2>&1): $(err)"
	"$xom" enable --system >"$W/out" 2>"$W/err"
	rc=$?
	t_check enable-system-again '[ $rc = 0 ] && [ "$(cat $PL)" = "$P" ] && has $W/err "already enabled"' "rc $rc: $(err)"
	# ---- the escape hatches: a program left alone, an invalid rule ------------
	cp /usr/bin/cat "$W/bin/offcat" && cp /usr/bin/cat "$W/bin/badcat"
	printf '# test rules\n%s off\n%s mode=bogus\n' "$W/bin/offcat" "$W/bin/badcat" >/etc/xom.conf
	chmod 644 /etc/xom.conf
	# ---- services, started as an init script would ------------------------------
	: >"$W/pids"
	/usr/bin/sleep 600 </dev/null >/dev/null 2>"$W/svc.err" & echo "$! sleep" >>"$W/pids"
	# (Their output goes elsewhere: the harness reads this part's until
	# nothing holds it open.)
	$PY -S -c 'import time; time.sleep(600)' </dev/null >/dev/null 2>>"$W/svc.err" & echo "$! python3" >>"$W/pids"
	/usr/bin/perl -e 'sleep 600' </dev/null >/dev/null 2>>"$W/svc.err" & echo "$! perl" >>"$W/pids"
	/usr/bin/dash -c 'while :; do /usr/bin/sleep 1; done' </dev/null >/dev/null 2>>"$W/svc.err" & echo "$! dash" >>"$W/pids"
	mkfifo "$W/fifo"
	"$W/bin/offcat" "$W/fifo" >/dev/null 2>>"$W/svc.err" & echo "$! offcat" >>"$W/pids"
	sleep 2
	# ---- the same output, and no plan made outside the store ----------------------
	run_cmds xom
	while IFS='|' read -r name cmd; do
		t=system-same-$name
		if ! same_as_ref xom "$name"; then
			t_fail $t "without xom: $(head -c 200 "$W/ref.$name" | tr '\n' '|') with: $(head -c 200 "$W/xom.$name" | tr '\n' '|') $(head -c 200 "$W/xom.$name.err")"
		elif grep -q '^xom: ' "$W/xom.$name.err"; then
			t_fail $t "xom spoke: $(grep '^xom: ' "$W/xom.$name.err" | head -3 | tr '\n' '|')"
		else
			t_pass $t
		fi
	done <"$W/cmds"
	t_check system-store-used '[ ! -e $XDG_CACHE_HOME/xom ] && [ ! -e $W/run/xom ] && [ ! -e /root/.cache/xom ] && ! grep -l "scanning" $W/xom.*.err $W/svc.err' "a plan was made: $("$xom" cache stats --list 2>&1 | grep -v "^$S" | head -8 | tr '\n' ' ')"
	# A command's own code is execute-only while it runs.
	/usr/bin/cat /proc/self/smaps >"$W/smaps" 2>"$W/err"
	n=$(xo_pages "$W/smaps" /usr/bin/cat)
	t_check system-command-protected '[ "$n" -gt 0 ] && [ $(xo_pages $W/smaps libc.so.6) -gt 0 ]' "cat: $n execute-only pages: $(err)"
	# The invalid rule: one line naming it, and the program runs unprotected.
	echo hi | "$W/bin/badcat" >"$W/out" 2>"$W/err"
	rc=$?
	t_check conf-invalid-rule '[ $rc = 0 ] && [ "$(cat $W/out)" = hi ] && [ $(wc -l <$W/err) = 1 ] && has $W/err "xom: /etc/xom.conf, line 3: mode must be enforce, audit or off, got '"'bogus'"'; running unprotected"' "rc $rc: $(err)"
	# ---- a set-user-ID program, run by another user ------------------------------
	# Its caller's XOM_OPTIONS names a log, a cache and a profile and turns
	# xom off: all of it is ignored, and its code is execute-only.
	mkdir -p "$W/suid" && cp /usr/bin/cat "$W/suid/cat"
	chown 0:0 "$W/suid/cat" && chmod 4755 "$W/suid/cat" && chmod 755 "$W" "$W/suid"
	/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/env -i \
		"XOM_OPTIONS=log=$W/suid/owned.log:cache=$W/suid/evil:profile=$W/suid/evil.prof:mode=off:exclude=*" \
		"$W/suid/cat" /proc/self/smaps /proc/self/status >"$W/out" 2>"$W/err"
	rc=$?
	n=$(xo_pages "$W/out" "$W/suid/cat")
	t_check setuid-ignores-path-options '[ $rc = 0 ] && grep -q "^Uid:.*65534.*0.*0" $W/out && [ "$n" -gt 0 ] && [ ! -e $W/suid/owned.log ] && [ ! -e $W/suid/evil ] && [ ! -e $W/suid/evil.prof ] && has $W/err "ignored in a secure-execution program"' "rc $rc, $n execute-only pages of the set-user-ID cat, $(ls $W/suid | tr '\n' ' '): $(err)"
	# ---- xom status PID for a service, and --system -----------------------------------
	py=$(awk '$2 == "python3" { print $1 }' "$W/pids")
	"$xom" status "$py" >"$W/out" 2>"$W/err"
	t_check status-service 'grep -Eq "^ *[1-9][0-9]* +0 .*libc.so.6$" $W/out && grep -q "${PY##*/}$" $W/out' "$(tr '\n' '|' <$W/out) $(err)"
	"$xom" status --system --json >"$W/json" 2>"$W/err"
	"$xom" status --system >"$W/table" 2>>"$W/err"
	# ---- every process running now, from /proc/*/smaps ----------------------------------
	dyn=0 prot=0 listed=0 bad="" seen=""
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		cat "$d/smaps" >"$W/census" 2>/dev/null || continue
		[ -s "$W/census" ] || continue          # a kernel thread
		grep -q 'ld-linux-x86-64' "$W/census" || continue   # static: busybox
		[ "$pid" = $$ ] && continue
		comm=$(cat "$d/comm" 2>/dev/null)
		dyn=$((dyn + 1))
		mapped=0; grep -q " $P\$" "$W/census" && mapped=1
		# Protected: the program's own code and libc's are execute-only
		# (xom.conf's off: nothing is).
		n=$(xo_pages "$W/census")
		nm=$(xo_pages "$W/census" "$(readlink "$d/exe")")
		nl=$(xo_pages "$W/census" libc.so.6)
		want=1; grep -q "^$pid offcat\$" "$W/pids" && want=0
		ok=0
		if [ $want = 1 ]; then [ "$nm" -gt 0 ] && [ "$nl" -gt 0 ] && ok=$mapped; else [ "$n" = 0 ] && ok=$mapped; fi
		if [ $ok = 1 ]; then
			prot=$((prot + 1)); seen="$seen $comm($nm+$nl)"
		else
			bad="$bad $pid($comm: libxom mapped $mapped, execute-only pages: $nm of the program, $nl of libc, $n in all)"
		fi
		# xom status --system ran a moment ago: a process born since (the
		# dash service starts a sleep every second) is not in it.
		if grep -q "\"pid\": $pid, " "$W/json"; then
			grep -q "\"pid\": $pid, .*\"protected_by\": \"preload\"" "$W/json" || bad="$bad $pid($comm: not preload in xom status --system)"
			listed=$((listed + 1))
		fi
	done
	svc=0
	while read -r pid name; do
		[ -d /proc/$pid ] && svc=$((svc + 1))
	done <"$W/pids"
	echo "# census: $dyn dynamically linked processes, $prot as they should be:$seen"
	echo "# $(tail -n 1 "$W/table")"
	t_check system-every-process-protected '[ -z "$bad" ] && [ $svc = 5 ] && [ $dyn -ge 5 ] && [ $prot = $dyn ] && [ $listed -ge 5 ]' "$svc of 5 services alive, $dyn dynamic, $listed of them in xom status --system, not protected:$bad"
	t_check status-system-total 'grep -q "^total: [0-9]* processes: [1-9][0-9]* preload, 0 audit, " $W/table && tail -n 1 $W/json | grep -q "\"kernel_shows_keys\": true"' "$(tail -n 2 $W/table | tr '\n' '|') $(err)"
	# The services go; the preload stays for the next part.
	while read -r pid name; do kill "$pid" 2>/dev/null; done <"$W/pids"
	rm -f /etc/xom.conf
	;;

recover)
	[ -s $PL ] || { t_fail system-recover "no $PL: the boot part did not run"; t_summary; exit 1; }
	# ---- xom disable, with xom-enable installed, gives back a run without xom ----
	"$xom" disable --system >"$W/out" 2>"$W/err"
	rc=$?
	t_check disable-system '[ $rc = 0 ] && [ ! -e $PL ] && has $W/err "removed $P from $PL" && has $W/err "disabled: removed $PL"' "rc $rc: $(err)"
	"$xom" disable --system >"$W/out" 2>"$W/err"
	rc=$?
	t_check disable-system-again '[ $rc = 0 ] && has $W/err "already disabled"' "rc $rc: $(err)"
	run_cmds off
	/usr/bin/cat /proc/self/maps >"$W/maps"
	bad=""
	while IFS='|' read -r name cmd; do
		same_as_ref off "$name" || bad="$bad $name"
	done <"$W/cmds"
	t_check disable-restores '[ -z "$bad" ] && ! grep -q libxom $W/maps' "differs:$bad; maps: $(grep libxom $W/maps)"
	# ---- the packages: an upgrade keeps that choice, removal takes the entry out ----
	# Installing xom-enable again is an upgrade to the same version: its
	# postinst does not list libxom.so again.
	$DPKG -i "$(deb xom-enable)" >"$W/err" 2>&1
	rc=$?
	t_check package-upgrade-keeps-disabled '[ $rc = 0 ] && [ "$(status xom-enable)" = "install ok installed" ] && [ ! -e $PL ]' "rc $rc, $PL: $(cat $PL 2>&1): $(err)"
	"$xom" enable --system >"$W/out" 2>"$W/err"
	rc=$?
	[ $rc = 0 ] && [ "$(cat $PL)" = "$P" ] || t_fail package-remove-disables "xom enable --system again: rc $rc: $(err)"
	$DPKG -r xom-enable >"$W/err" 2>&1
	rc=$?
	echo "# dpkg -r xom-enable (exit $rc): $(tr '\n' '|' <"$W/err")"
	t_check package-remove-disables '[ $rc = 0 ] && [ "$(status xom-enable)" != "install ok installed" ] && [ ! -e $PL ] && has $W/err "xom: removed $PL, which listed only $P" && [ "$(status xom)" = "install ok installed" ] && [ -f $P ]' "rc $rc, xom-enable '$(status xom-enable)', $PL: $(cat $PL 2>&1): $(err)"
	# ---- a listed library that is missing, or not a library ----------------------------
	# The dynamic linker says so in one line per program and runs it.
	mkdir -p "$W/junk"
	echo "not a library" >"$W/junk/libxom.so"
	for kind in missing junk; do
		case $kind in
		missing) lib=$W/gone/libxom.so ;;
		junk) lib=$W/junk/libxom.so ;;
		esac
		echo "$lib" >$PL
		# A few of the programs: a shell script, coreutils, python3.
		run_cmds $kind dash-script coreutils python3
		bad=""
		while IFS='|' read -r name cmd; do
			same_as_ref $kind "$name" || bad="$bad $name"
			has "$W/$kind.$name.err" "ERROR: ld.so: object '$lib' from $PL cannot be preloaded" || bad="$bad $name(no ld.so line)"
		done <"$W/cmds"
		/usr/bin/dash -c 'echo shell ok' >"$W/out" 2>"$W/err"
		t_check "preload-$kind-library-runs" '[ -z "$bad" ] && [ "$(cat $W/out)" = "shell ok" ]' "$bad; dash: $(cat $W/out) $(err)"
	done
	# ---- a truncated copy at the listed path ------------------------------------------
	# Debian 12's dynamic linker maps the segments its headers name, and
	# touching the part past the end of the file is SIGBUS: every
	# dynamically linked program dies.  The static shell still runs and
	# can remove the line (the rescue that docs/operators.md describes).
	cp "$P" "$W/libxom.so.good"
	head -c 8192 "$W/libxom.so.good" >"$P"
	echo "$P" >$PL
	/usr/bin/dash -c 'echo shell ok' >"$W/out" 2>"$W/err"
	rc=$?
	/bin/busybox sh -c 'echo static ok' >"$W/out2" 2>&1
	brc=$?
	/bin/busybox sh -c "rm $PL"
	/usr/bin/dash -c 'echo shell ok' >"$W/out3" 2>&1
	rc3=$?
	cp "$W/libxom.so.good" "$P"
	case $rc in
	0) how="programs run, with one line: $(head -c 120 "$W/err")" ;;
	135) how="dynamically linked programs die by SIGBUS" ;;
	*) how="dash exited $rc" ;;
	esac
	echo "# truncated $P listed: $how"
	t_check "preload-truncated-library-rescue" '{ [ $rc = 135 ] || { [ $rc = 0 ] && [ "$(cat $W/out)" = "shell ok" ]; }; } && [ $brc = 0 ] && [ "$(cat $W/out2)" = "static ok" ] && [ ! -e $PL ] && [ $rc3 = 0 ] && [ "$(cat $W/out3)" = "shell ok" ]' "dash $rc ($how), static shell $brc, after rm: $rc3 $(cat $W/out3)"
	rm -f $PL
	;;
*)
	echo "usage: guest-system.sh install|boot|recover" >&2
	exit 2
	;;
esac
t_summary
