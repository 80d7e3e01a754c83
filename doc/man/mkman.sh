#!/bin/sh
# mkman.sh: the man pages of mrengine's C API, made from the public headers' comments, which are
# their one source: a page in section 3 for each public function (the comment above its
# declaration is its description; the declarations that follow one comment share it), and the
# overview page mrengine(3) (the header's opening comment, then every function by the header's
# "---- Section ----" lines, each with the first sentence of its comment).
#
#   mkman.sh OUTDIR VERSION HEADER...
#
# A public function is one declared MR_EXTERN (or an MR_INLINE_ fast path) whose name does not
# end in "_" (those are the headers' private helpers).
set -eu
[ $# -ge 3 ] || { echo "usage: mkman.sh OUTDIR VERSION HEADER..." >&2; exit 2; }
out=$1; version=$2; shift 2
mkdir -p "$out"

${AWK:-awk} -v out="$out" -v version="$version" '
# The text of a comment line: without "/* ", " * " or " */"; indentation beyond them is kept.
function comment_text(line) {
  sub(/^\/\* ?/, "", line); sub(/^ \*\/$/, "", line); sub(/^ \* ?/, "", line)
  sub(/^ \*$/, "", line); sub(/ *\*\/ *$/, "", line)
  return line
}
# Every `from` in s replaced by `to` (awks differ on backslashes in gsub replacements).
function replace(s, from, to,    res, i) {
  res = ""
  while ((i = index(s, from)) > 0) {
    res = res substr(s, 1, i - 1) to; s = substr(s, i + length(from))
  }
  return res s
}
# roff-safe text: backslashes, hyphens (minus signs in options), a leading dot or quote.
function roff(s) {
  s = replace(replace(s, "\\", "\\e"), "-", "\\-")
  if (s ~ /^[.\047]/) s = "\\&" s
  return s
}
# Comment lines as roff: indented lines (code, tables) unfilled, the rest filled.
function body(text,    n, i, lines, res, pre) {
  n = split(text, lines, "\n"); res = ""; pre = 0
  for (i = 1; i <= n; i++) {
    if (lines[i] ~ /^  / && !pre) { res = res ".PP\n.nf\n"; pre = 1 }
    else if (lines[i] !~ /^  / && pre) { res = res ".fi\n.PP\n"; pre = 0 }
    if (lines[i] == "") { if (!pre) res = res ".PP\n"; continue }
    res = res roff(lines[i]) "\n"
  }
  if (pre) res = res ".fi\n"
  return res
}
# The first sentence: up to a full stop before a capital, or a colon, outside parentheses.
function summary(text,    s, i, c, depth, res) {
  s = text; gsub(/\n */, " ", s); depth = 0; res = s
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "(") depth++
    else if (c == ")" && depth > 0) depth--
    else if (depth == 0 && c == "." && (i == length(s) || substr(s, i + 1, 2) ~ /^ [A-Z]/)) {
      res = substr(s, 1, i - 1); break
    } else if (depth == 0 && c == ":" && substr(s, i + 1, 1) == " ") {
      res = substr(s, 1, i - 1); break
    }
  }
  if (res ~ /^[A-Z][^A-Z_]/) res = tolower(substr(res, 1, 1)) substr(res, 2)
  return res
}
function header(name, title) {
  return ".TH " name " 3 \"\" \"mrengine " version "\" \"" title "\"\n"
}

FNR == 1 { in_comment = 0; pending = ""; first_comment = 1 }
in_comment {
  cur = cur "\n" comment_text($0)
  if ($0 ~ /\*\//) { in_comment = 0; done_comment() }
  next
}
/^\/\* ---- .* -+ \*\/$/ {
  section = $0; sub(/^\/\* ---- /, "", section); sub(/ -+ \*\/$/, "", section)
  sections[++nsections] = section; pending = ""; next
}
/^\/\*/ {
  cur = comment_text($0)
  if ($0 ~ /\*\//) done_comment(); else in_comment = 1
  next
}
/^$/ { pending = ""; next }
/^MR_(EXTERN|INLINE_) / && !/extern __thread/ {
  decl = $0
  while (decl !~ /[;{]/ && (getline line) > 0) decl = decl " " line
  sub(/ *[;{].*$/, ";", decl); sub(/^MR_EXTERN /, "", decl)
  sub(/^MR_INLINE_ /, "static inline ", decl)
  gsub(/  +/, " ", decl)
  name = decl; sub(/ *\(.*$/, "", name); sub(/^.*[ *]/, "", name)
  if (name ~ /_$/) next
  if (pending == "") { print "mkman.sh: " name " has no comment: no page" > "/dev/stderr"; next }
  nfn++; fname[nfn] = name; fproto[nfn] = decl; fdoc[nfn] = pending; fsection[nfn] = section
  isfn[name] = 1
  next
}
{ next }

function done_comment() {
  # The opening comment of the first header is the overview.
  if (first_comment && overview == "") { overview = cur; first_comment = 0; pending = ""; return }
  first_comment = 0
  pending = cur
}

END {
  for (i = 1; i <= nfn; i++) {
    f = out "/" fname[i] ".3"
    printf "%s", header(fname[i], "mrengine") > f
    print ".SH NAME" > f
    print fname[i] " \\- " roff(summary(fdoc[i])) > f
    print ".SH SYNOPSIS\n.nf\n.B #include <mrengine.h>\n.PP" > f
    print ".B " fproto[i] > f
    print ".fi\n.PP\nLink with \\fI\\-lmrengine\\fP (pkg\\-config mrengine), or CMake\047s" > f
    print "\\fBmrengine::mrengine\\fP." > f
    print ".SH DESCRIPTION" > f
    printf "%s", body(fdoc[i]) > f
    print ".SH SEE ALSO" > f
    # The functions its description names, then the overview.
    t = fdoc[i]; delete seen; seen[fname[i]] = 1; see = ""
    while (match(t, /MR_[A-Za-z0-9_]+/)) {
      w = substr(t, RSTART, RLENGTH); t = substr(t, RSTART + RLENGTH)
      if (isfn[w] && !seen[w]) { seen[w] = 1; see = see ".BR " w " (3),\n" }
    }
    printf "%s.BR mrengine (3)\n", see > f
    close(f)
  }

  f = out "/mrengine.3"
  printf "%s", header("mrengine", "mrengine") > f
  n = split(overview, lines, "\n"); title = lines[1]
  sub(/^[^:]*: */, "", title); sub(/\.$/, "", title)
  rest = ""; for (k = 2; k <= n; k++) rest = rest (k > 2 ? "\n" : "") lines[k]
  sub(/^\n+/, "", rest)
  print ".SH NAME\nmrengine \\- " roff(title) > f
  print ".SH SYNOPSIS\n.nf\n.B #include <mrengine.h>\n.PP" > f
  print "cc prog.c $(pkg\\-config \\-\\-cflags \\-\\-libs mrengine)" > f
  print "find_package(mrengine CONFIG)      # CMake" > f
  print "target_link_libraries(prog PRIVATE mrengine::mrengine)\n.fi" > f
  print ".SH DESCRIPTION" > f
  printf "%s", body(rest) > f
  print ".SH FUNCTIONS" > f
  for (s = 1; s <= nsections; s++) {
    listed = 0
    for (i = 1; i <= nfn; i++) {
      if (fsection[i] != sections[s]) continue
      if (!listed) { print ".SS " roff(sections[s]) > f; listed = 1 }
      print ".TP\n.BR " fname[i] " (3)\n" roff(summary(fdoc[i])) > f
    }
  }
  print ".SH SEE ALSO" > f
  print "doc/api.md, doc/options.md and doc/design.md in mrengine\047s source distribution." > f
  close(f)
}
' "$@"
