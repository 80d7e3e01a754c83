#!/bin/sh
# check-layers.sh: check doc/gomp.md's map of libmrgomp's code against gomp/'s #include lines.
#
# The map is the table under "## The map of the code": one row per concept, with its floor, its
# files, and the concepts it calls (the files it includes, export.hpp aside). This checks that
# every gomp/*.cpp and *.hpp is in the map and in gomp/local.mk's sources; that a file includes
# only its own header and files on lower floors, all named in its row; that each row names
# nothing it does not include; that outside gomp/ a file includes only mrengine's public headers
# engine/cpu_relax.hpp and engine/context_local.hpp; and that env.cpp is the one file that reads the environment.
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
map=$src/doc/gomp.md
dir=$src/gomp
[ -f "$map" ] && [ -d "$dir" ] || { echo "check-layers: no $map or $dir"; exit 1; }

{
  # M|floor|files|calls: the map's rows.
  awk -F'|' '/^## The map of the code/ { on = 1; next }
             on && /^## / { on = 0 }
             on && $2 ~ /^ *[0-9]+ *$/ { print "M|" $2 "|" $3 "|" $5 }' "$map"
  # S|file: the library's sources in gomp/local.mk.
  awk '/^gomp_libgomp_la_SOURCES/ { on = 1 } on { for (i = 1; i <= NF; i++) print "S|" $i }
       on && !/\\$/ { on = 0 }' "$dir/local.mk"
  for f in "$dir"/*.cpp "$dir"/*.hpp; do
    b=${f##*/}
    echo "F|$b"
    # I|file|included
    sed -n 's/^#include "\(.*\)".*/I|'"$b"'|\1/p' "$f"
    # G|file: reads the environment.
    if grep -q 'getenv *(' "$f"; then echo "G|$b"; fi
  done
} | awk -F'|' '
  function stem(f) { sub(/\.[ch]pp$/, "", f); return f }
  function fail(msg) { print "FAIL: " msg; bad = 1 }
  $1 == "M" {
    n = split($3, w, /[`, ]+/)
    for (i = 1; i <= n; i++) if (w[i] != "") { floor[w[i]] = $2 + 0; mapped[w[i]] = 1 }
    c = ""
    for (i = 1; i <= n; i++) if (w[i] != "") { c = stem(w[i]); break }
    m = split($4, u, /[`, ]+/)
    for (i = 1; i <= m; i++) if (u[i] ~ /^[a-z_]+$/) calls[c, u[i]] = 1
    rows[c] = 1
    next
  }
  $1 == "S" { if ($2 ~ /^gomp\//) { sub(/^gomp\//, "", $2); sourced[$2] = 1 } next }
  $1 == "F" { files[$2] = 1; next }
  $1 == "I" { incs[++ni] = $2 "|" $3; next }
  $1 == "G" { if ($2 != "env.cpp") fail($2 " reads the environment (only env.cpp does)"); next }
  END {
    for (f in files) {
      if (!(f in mapped)) fail("gomp/" f " is not in the map (doc/gomp.md)")
      if (!(f in sourced)) fail("gomp/" f " is not in gomp_libgomp_la_SOURCES (gomp/local.mk)")
    }
    for (f in mapped) if (!(f in files)) fail("the map names gomp/" f ", which does not exist")
    for (k = 1; k <= ni; k++) {
      split(incs[k], p, "|"); f = p[1]; x = p[2]
      if (!(x in files)) {
        if (x != "mrengine.h" && x != "engine/cpu_relax.hpp" && x != "engine/context_local.hpp")
          fail(f " includes " x ": outside gomp/, only mrengine.h, engine/cpu_relax.hpp and engine/context_local.hpp")
        continue
      }
      if (!(f in mapped) || !(x in mapped)) continue
      if (stem(x) == stem(f)) {
        if (!(f ~ /\.cpp$/ && x ~ /\.hpp$/)) fail(f " includes " x)
        continue
      }
      if (floor[x] >= floor[f])
        fail(f " (floor " floor[f] ") includes " x " (floor " floor[x] "): not a lower floor")
      if (x == "export.hpp") continue
      used[stem(f), stem(x)] = 1
      if (!((stem(f), stem(x)) in calls))
        fail(f " includes " x ", but the map does not say that " stem(f) " calls " stem(x))
    }
    for (key in calls) {
      split(key, q, SUBSEP)
      if (!(key in used)) fail("the map says that " q[1] " calls " q[2] ", but it includes none of it")
    }
    if (!bad) print "PASS: the map of gomp/ (doc/gomp.md) matches its #include lines"
    exit bad
  }'
