#!/bin/bash
# No two source files call each other in a loop: for every folder of the
# product (the runtime, its doors, the formats, the tools, the scanner),
# the objects that make built from its sources are read with nm, a file
# calls another when it uses a symbol that the other alone defines, and
# the loops of that graph are found (Tarjan's strongly connected
# components).  A loop would mean that neither file can be read, tested or
# replaced without the other: DESIGN.md says which way each folder's
# calls go.  One check per folder, and one for loops that cross folders.
# Usage: tests/house/loops.sh [BUILDDIR]
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
B=${1:-build}
FOLDERS="loader preload audit formats plan common scan cmd"

list=$(mktemp)
trap 'rm -f "$list"' EXIT
for d in $FOLDERS; do
	for c in $(find "$d" -name '*.c' | sort); do
		o=$B/${c%.c}.o
		[ -f "$o" ] || continue
		nm "$o" | awk -v f="$c" '
			NF == 3 && $2 ~ /^[TDBRCV]$/ { print "D", f, $3 }
			NF == 2 && $1 == "U"         { print "U", f, $2 }'
	done
done >"$list"
[ -s "$list" ] || { t_fail house-objects "no objects under $B: run make first"; t_summary; exit; }

# LOOP lines, one per loop: the files, then "a>b:symbol" for each call.
loops=$(awk '
	$1 == "D" { if (!($3 in owner)) owner[$3] = $2; else if (owner[$3] != $2) twice[$3] = 1; next }
	$1 == "U" { use[++nu] = $2 SUBSEP $3 }
	END {
		for (i = 1; i <= nu; i++) {
			split(use[i], p, SUBSEP)
			s = p[2]
			if (!(s in owner) || (s in twice) || s == "main" || owner[s] == p[1]) continue
			k = p[1] SUBSEP owner[s]
			if (!(k in edge)) { edge[k] = s; nout[p[1]]++; out[p[1], nout[p[1]]] = owner[s] }
			node[p[1]] = node[owner[s]] = 1
		}
		for (v in node) if (!(v in index_)) strong(v)
	}
	function strong(v,   i, w, comp, n, why, a, b, j) {
		index_[v] = low[v] = counter++
		stack[++top] = v; on[v] = 1
		for (i = 1; i <= nout[v]; i++) {
			w = out[v, i]
			if (!(w in index_)) { strong(w); if (low[w] < low[v]) low[v] = low[w] }
			else if (on[w] && index_[w] < low[v]) low[v] = index_[w]
		}
		if (low[v] != index_[v]) return
		n = 0; comp = ""
		do { w = stack[top--]; on[w] = 0; member[++n] = w; comp = comp " " w } while (w != v)
		if (n < 2) return
		why = ""
		for (a = 1; a <= n; a++) for (b = 1; b <= n; b++)
			if ((member[a] SUBSEP member[b]) in edge)
				why = why " " member[a] ">" member[b] ":" edge[member[a], member[b]]
		print "LOOP" comp " |" why
	}' "$list")

for d in $FOLDERS; do
	bad=$(grep -E "LOOP.* $d/" <<<"$loops" | head -n 3 | cut -c1-900)
	t_check "no-call-loop-in-$d" '[ -z "$bad" ]' "$bad"
done
t_summary
