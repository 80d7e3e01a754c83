#!/bin/sh
# check_man.sh: every public function of the C API has a man page with a description. The
# functions are found here without the page generator (doc/man/mkman.sh): the compiler
# preprocesses mrengine.h as a client sees it, and every function declared with default
# visibility, or defined static inline, whose name does not end in "_" is public. Each must have
# doc/man/man3/NAME.3 (made by the build) with a NAME line and a non-empty DESCRIPTION, and be
# listed in mrengine(3). With groff installed, every page must also format without a warning.
set -eu
top=${top_srcdir:-$(dirname "$0")/..}
pages=doc/man/man3
[ -d "$pages" ] || { echo "FAIL: $pages not built (make all makes it)"; exit 1; }

funcs=$(printf '#include <mrengine.h>\n' |
  ${MR_TEST_CC:-cc} -E -P -Iinclude -I"$top/include" ${ATOMIC_OPS_CFLAGS:-} - |
  tr '\n' ' ' | tr ';{}' '\n\n\n' |
  grep -E 'visibility *\( *"default" *\)|static __inline__' | grep -v 'extern __thread' |
  sed -n 's/^.*[ *]\(MR_[A-Za-z0-9_]*\) *(.*$/\1/p' | grep -v '_$' | sort -u)
n=$(printf '%s\n' "$funcs" | grep -c . || true)
# A floor, so that a preprocessor output this script no longer understands fails too.
[ "$n" -ge 40 ] || { echo "FAIL: found only $n public functions in mrengine.h"; exit 1; }

status=0
for f in $funcs; do
  page=$pages/$f.3
  if [ ! -f "$page" ]; then
    echo "FAIL: $f has no man page ($page)"; status=1; continue
  fi
  # The NAME line: "NAME \- summary", with a summary.
  grep -q "^$f \\\\- ..*" "$page" || { echo "FAIL: $page: no NAME line for $f"; status=1; }
  # The DESCRIPTION: text lines (not requests) up to the next section.
  desc=$(sed -n '/^\.SH DESCRIPTION/,/^\.SH /p' "$page" | grep -v '^\.' | grep -c '[a-zA-Z]' ||
    true)
  [ "$desc" -gt 0 ] || { echo "FAIL: $page: empty DESCRIPTION"; status=1; }
  grep -q "^\\.BR $f (3)" "$pages/mrengine.3" ||
    { echo "FAIL: mrengine(3) does not list $f"; status=1; }
done

if command -v groff >/dev/null 2>&1; then
  for page in "$pages"/*.3; do
    warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1) || true
    [ -z "$warn" ] || { echo "FAIL: $page: $warn"; status=1; }
  done
fi
[ $status -eq 0 ] && echo "$n public functions, each with a man page"
exit $status
