#!/bin/sh
# layout.sh - the core's rooms kept (make layout; part of make test):
#
#   1. a file of a room includes headers of its own room and of rooms below it only
#      (ROOMS, from the ground up); gm.h, gm.c and api.c, at core/'s top, any;
#   2. no file of core/ outside device/ includes a header of cuda/;
#   3. cuda/ includes of the core only base/types.h and keys/ (the keys, their
#      prefix, hd.h and the co-rank), which include nothing above them;
#   4. no loop of includes among the files of core/ and cuda/;
#   5. with BUILD's objects there (after a build): no object of a room uses a
#      symbol defined in a room above it, and no loop of symbols among the objects
#      of core/ and cuda/ (A uses one of B's, B one of A's, ...);
#   6. no file of core/, cli/, cuda/ or mpi/ over 450 lines, and no function there
#      over 100 (from the first line of its head at column 0 to its closing brace).
#
# Usage: tests/layout.sh [BUILD] (default build), from the project's root.
# Prints each breach and exits 1 when there is one.

ROOMS="base keys read sort write merge runs device plan records stream"
BUILD=${1:-build}
export LC_ALL=C
bad=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

floor() { # the floor of a path under core/ (top: 99), or nothing for another
    case $1 in
    core/*/*)
        r=${1#core/}; r=${r%%/*}; n=1
        for x in $ROOMS; do [ "$x" = "$r" ] && { echo $n; return; }; n=$((n + 1)); done
        echo "unknown room $r" >&2; echo 0 ;;
    core/*) echo 99 ;;
    esac
}

# Every quoted include of core/ and cuda/, resolved as the compiler resolves it
# (the including file's folder first, then -Icore): "FILE TARGET" lines.
for f in $(find core cuda -type f \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) | sort); do
    d=$(dirname "$f")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
        if [ -f "$d/$inc" ]; then t=$(realpath --relative-to=. "$d/$inc")
        elif [ -f "core/$inc" ]; then t="core/$inc"
        else continue; fi
        echo "$f $t"
    done
done | sort -u >"$tmp/includes"

while read -r f t; do
    case $f in
    core/*)
        case $t in
        cuda/*) case $f in core/device/*) ;; *) echo "layout: $f includes $t: only core/device/ includes cuda/"; bad=1 ;; esac ;;
        core/*) a=$(floor "$f"); b=$(floor "$t")
                if [ "$b" -gt "$a" ]; then echo "layout: $f includes $t, a room above it"; bad=1; fi ;;
        esac ;;
    cuda/*)
        case $t in
        core/base/types.h | core/keys/*) ;;
        core/*) echo "layout: $f includes $t: cuda/ sees only core/base/types.h and core/keys/"; bad=1 ;;
        esac ;;
    esac
done <"$tmp/includes"

# keys/ as cuda/ sees it must stay on the ground: nothing but base/types.h below it
while read -r f t; do
    case $f in core/keys/*) case $t in core/keys/* | core/base/types.h) ;; *)
        echo "layout: $f includes $t: keys/ (which cuda/ includes) sees only base/types.h below it"; bad=1 ;;
    esac ;; esac
done <"$tmp/includes"

# loops: a depth-first search over "FROM TO" lines, each loop printed once
loops() { # $1: what the arrows are
    awk -v what="$1" '
    { out[$1] = out[$1] " " $2; node[$1]; node[$2] }
    function visit(v,   i, n, w, k, c) {
        state[v] = 1; path[++depth] = v
        n = split(out[v], w, " ")
        for (i = 1; i <= n; i++) {
            if (state[w[i]] == 1) {
                c = w[i]; for (k = depth; k >= 1 && path[k] != w[i]; k--) c = path[k] " -> " c
                print "layout: a loop of " what ": " w[i] " -> " c; found = 1
            } else if (!state[w[i]]) visit(w[i])
        }
        state[v] = 2; depth--
    }
    END { for (v in node) if (!state[v]) visit(v); exit found }'
}
loops includes <"$tmp/includes" || bad=1

# symbols between objects, where the build has them
objs=$(ls "$BUILD"/core/*.o "$BUILD"/core/*/*.o 2>/dev/null | grep -v '/api\.o$')
cudaobjs=$(ls "$BUILD"/cuda/*.o 2>/dev/null | grep -v -e gpu_load -e gpu_stub -e testing -e status.pic)
if [ -n "$objs" ]; then
    for set in core cuda; do
        if [ $set = core ]; then o="$objs $BUILD/core/api.o"; else o=$cudaobjs; fi
        [ -n "$o" ] || continue
        for x in $o; do [ -f "$x" ] && nm "$x" | awk -v o="$x" 'NF == 3 && $2 ~ /^[TDBRCVW]$/ { print "D", $3, o } NF == 2 && $1 == "U" { print "U", $2, o }'; done >"$tmp/syms"
        awk '$1 == "D" && !($2 in def) { def[$2] = $3 } $1 == "U" { use[NR] = $3 " " $2 }
             END { for (i in use) { split(use[i], p, " "); if ((p[2] in def) && def[p[2]] != p[1]) print p[1], def[p[2]], p[2] } }' \
            "$tmp/syms" | sort -u >"$tmp/symuses"
        if [ $set = core ]; then
            while read -r a b s; do
                fa=$(floor "${a#"$BUILD"/}"); fb=$(floor "${b#"$BUILD"/}")
                if [ "$fb" -gt "$fa" ]; then echo "layout: $a uses $s of $b, a room above it"; bad=1; fi
            done <"$tmp/symuses"
        fi
        cut -d' ' -f1,2 "$tmp/symuses" | sort -u | loops "symbols ($set objects)" || bad=1
    done
fi

# the sizes of files and functions
for f in $(find core cli cuda mpi -type f \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) | sort); do
    n=$(wc -l <"$f")
    if [ "$n" -gt 450 ]; then echo "layout: $f has $n lines (450 at most)"; bad=1; fi
done
find core cli cuda mpi -type f \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) | sort |
    xargs awk 'FNR == 1 { start = 0 }
        /^[A-Za-z_].*\(/ && !/;[ \t]*$/ && !/^(typedef|struct|enum|union|#)/ { if (!start) start = FNR }
        /^[A-Za-z_].*;[ \t]*$/ { if (start == FNR) start = 0 }
        /^}/ { if (start && FNR - start + 1 > 100) { print "layout: " FILENAME ":" start ": a function of " FNR - start + 1 " lines (100 at most)"; bad = 1 } start = 0 }
        END { exit bad }' || bad=1

[ $bad = 0 ] && echo "layout: the rooms are kept ($(wc -l <"$tmp/includes") includes$( [ -n "$objs" ] && echo ", the objects' symbols") checked; files within 450 lines, functions within 100)"
exit $bad
