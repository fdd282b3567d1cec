#!/bin/sh
# check_layers.sh — which folder of src/ may include which headers: the layer map of
# docs/ARCHITECTURE.md, checked the way curl's checksrc checks style. Prints each
# include that crosses a layer the wrong way, with its file and line, and exits 1 if
# there is one. It reads #include lines only; the compiler keeps the rest (struct qr_db
# and struct table are opaque outside src/engine).
cd "$(dirname "$0")/.." || exit 2

# folder: the header prefixes its files may include ("quarry.h" is the public API;
# "engine/" means engine's interface headers, never engine_int.h)
allowed() {
    case "$1" in
    util) echo "util/" ;;
    model) echo "util/ model/" ;;
    storage) echo "util/ storage/" ;;
    expr) echo "util/ model/ expr/" ;;
    capacity) echo "util/ capacity/" ;;
    engine) echo "util/ model/ expr/ storage/ capacity/ engine/ engine/engine_int.h quarry.h" ;;
    watch) echo "util/ model/ expr/ engine/ watch/ checker/model.h checker/doc.h checker/check.h" ;;
    ops) echo "util/ model/ expr/ capacity/ engine/ watch/ ops/ quarry.h" ;;
    partiql) echo "util/ model/ expr/ engine/ ops/ partiql/ quarry.h" ;;
    cqlwire) echo "util/ cqlwire/" ;;
    cql) echo "util/ model/ expr/ engine/ watch/ ops/ cqlwire/ cql/ quarry.h" ;;
    api) echo "util/ model/ watch/ ops/ partiql/ cqlwire/ cql/ api/ quarry.h" ;;
    server) echo "util/ cqlwire/ server/ quarry.h" ;;
    checker) echo "util/ checker/ cql/ast.h quarry.h" ;;
    cli) echo "util/ server/ checker/ cli/ quarry.h" ;;
    *) echo "" ;;
    esac
}

bad=0
for dir in src/*/; do
    layer=$(basename "$dir")
    rules=$(allowed "$layer")
    if [ -z "$rules" ]; then
        echo "$dir: a folder the layer map does not know (add it to tests/check_layers.sh)"
        bad=1
        continue
    fi
    for f in $(find "$dir" -name '*.[ch]' | sort); do
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | while IFS= read -r line; do
            n=${line%%:*}
            header=$(printf '%s' "$line" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
            ok=0
            for r in $rules; do
                case "$r" in
                */) [ "${header#"$r"}" != "$header" ] && ok=1 ;;
                *) [ "$header" = "$r" ] && ok=1 ;;
                esac
            done
            # engine's private header is engine's alone
            if [ "$header" = "engine/engine_int.h" ] && [ "$layer" != engine ]; then ok=0; fi
            if [ $ok -eq 0 ]; then
                echo "$f:$n: $layer may not include \"$header\""
                echo x >>"${TMPDIR:-/tmp}/check_layers.$$"
            fi
        done
    done
done
if [ -f "${TMPDIR:-/tmp}/check_layers.$$" ]; then
    rm -f "${TMPDIR:-/tmp}/check_layers.$$"
    bad=1
fi
if [ $bad -ne 0 ]; then
    echo "layer check failed: see docs/ARCHITECTURE.md for which layer may call which"
    exit 1
fi
echo "layer check: every include follows the layer map"
