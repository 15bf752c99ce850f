#!/bin/sh
# seeds.sh OUT - the fuzz targets' seed corpora, made from testdata/cases: for
# each golden case, its inputs as parser seeds, its arguments as an option seed,
# and the case itself (operation, -r, -u, inputs) as a pipeline seed; and pairs of
# lines for the key orders (options byte, line, NUL, line).
set -eu
out=$1
cases=$(dirname "$0")/../testdata/cases
mkdir -p "$out/parse" "$out/options" "$out/pipeline" "$out/keys"
i=0
for pair in '\000 -12.50\000-12.5' '\000 1700000000\0001700000001' \
            '\000123456789012345678\000123456789012345679' '\000-0\000.0' \
            '\001nan\000-inf' '\0011e3\0000x1p10' '\002 2K\000-3M' '\0031,2\0001b' \
            '\010a,10,x\000b,9' '\013a,2.5G\000b,2500M' '\0142,2n\0001.3b,1.5' \
            '\043abc\000ABD' '\100a-b c\000ab\nc' '\140a\001b\000ab' '\200A.b\000a-B' \
            '\300 jan 5\000FEB' '\350x,Dec\000y, nov'; do
    printf "$pair" > "$out/keys/pair$i"
    i=$((i + 1))
done
for c in "$cases"/*/; do
    name=$(basename "$c")
    args=$(cat "$c/cmd")
    # options: the arguments, NUL-separated ("< file" dropped)
    printf '%s' "${args%%<*}" | tr ' ' '\000' > "$out/options/$name"
    op=0; flags=0; files=
    for a in $args; do
        case $a in
        merge) op=0;; sort) op=1;; check) op=2;;
        -r) flags=$((flags | 1));; -u) flags=$((flags | 2));; -ru|-ur) flags=$((flags | 3));;
        *) [ -f "$c/$a" ] && files="$files $a";;
        esac
    done
    n=0
    for f in $files; do
        { printf '\010'; cat "$c/$f"; } > "$out/parse/$name-$f"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || continue
    {
        printf "\\$(printf %03o "$op")\\$(printf %03o "$flags")\\$(printf %03o $((n - 1)))"
        first=1
        for f in $files; do
            [ $first = 1 ] || printf '\000'
            first=0
            cat "$c/$f"
        done
    } > "$out/pipeline/$name"
done
