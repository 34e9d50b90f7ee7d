# drop_preload: takes /usr/lib/xom/libxom.so out of /etc/ld.so.preload,
# keeping every other entry and line, and removes the file when nothing
# but white space is left.  The new list is written beside the old one and
# renamed over it, so that a program that starts meanwhile reads the old
# list or the new one, whole.  (Put into the maintainer scripts in the
# place of their #PRELOAD_DROP# line by debian/rules.)
drop_preload() {
	f=/etc/ld.so.preload
	lib=/usr/lib/xom/libxom.so
	[ -f "$f" ] || return 0
	# The dynamic linker splits the list at white space and colons.
	tr -s ' \t:' '\n' <"$f" | grep -qxF "$lib" || return 0
	tmp=$(mktemp /etc/ld.so.preload.XXXXXX)
	awk -v lib="$lib" '{
		n = split($0, w, /[ \t:]+/); out = ""; hit = 0
		for (i = 1; i <= n; i++) {
			if (w[i] == lib) { hit = 1; continue }
			if (w[i] != "") out = out (out == "" ? "" : " ") w[i]
		}
		if (!hit) print; else if (out != "") print out
	}' "$f" >"$tmp"
	if grep -q '[^[:space:]]' "$tmp"; then
		chmod 644 "$tmp"
		mv -f "$tmp" "$f"
		echo "xom: removed $lib from $f"
	else
		rm -f "$tmp" "$f"
		echo "xom: removed $f, which listed only $lib"
	fi
}
