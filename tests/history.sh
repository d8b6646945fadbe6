#!/bin/sh
# ocal — the docs and the code speak of the present. Run by `make check`; reads the source tree
# only, needs no device. It fails, naming file:line, when
#   1. README.md, CONTRIBUTING.md, docs/*.md (but docs/measurements.md, the one dated log, and
#      docs/api-changes.md), or a comment in src/, cl/, include/, tools/ speaks of past work:
#      numbered sessions, rounds, issues or bugs (`issue 17`, `#27`), commits, "measured in
#      2026", who ran what ("by the lead"), "next round", "this session", or a date — except
#      that a table row of a docs page may carry a date (its figures table's date column);
#   2. README.md, CONTRIBUTING.md or a page of docs/ names a path outside the repository
#      (`../` outside a link, `/work/`, `/tmp/`, `.device/`);
#   3. a relative markdown link in README.md, CONTRIBUTING.md or docs/ points to no file of
#      the repository, or to an anchor that file does not have; or a comment cites a page of
#      docs/ (or an anchor of one) that does not exist.
# NEWS and docs/measurements.md are history by design, and are not read.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src" || exit 99
status=0

# Past work, as extended regular expressions matched without regard to case. Each is narrow
# enough that present-tense prose does not trip it ("round to nearest", a `session` variable).
history_patterns='\bsessions? [0-9]+
\b(this|that|the|last|previous|an earlier|a later|one) session\b
\brounds? [0-9]+\b
\b(next|later) rounds\b
\bissue #?[0-9]+
\bissues #?[0-9]+(,| and | or )
(^|[^&[:alnum:]/])#[0-9]+\b
\bbugs? [0-9]+\b
\b(at|after|before|since) [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\b
\bcommit [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\b
\bmeasured (on|in) 20[0-9][0-9]
\b(by|for) the lead\b
\bthe helper'"'"'s\b
\bsince this run\b
\bnot done yet\b'
date_pattern='(^|[^0-9])20[0-9][0-9]-[01][0-9]-[0-3][0-9]'
path_pattern='(^|[^.[:alnum:]_-])\.\./|/work/|/tmp/|(^|[^[:alnum:]_])\.device/'

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

docs="README.md CONTRIBUTING.md"
for f in docs/*.md; do
  case "$f" in docs/measurements.md | docs/api-changes.md) ;; *) docs="$docs $f" ;; esac
done

# The patterns go through the environment: awk's -v would read \b as a backspace.
export history_patterns date_pattern path_pattern
scan() { # file kind text-file
  awk -v file="$1" -v kind="$2" -f "$tmp/check.awk" "$3"
}

# The check of one text: past work, dates outside a docs table, paths outside the repository.
cat > "$tmp/check.awk" <<'AWK'
BEGIN {
  n = split(ENVIRON["history_patterns"], pats, "\n")
  datep = ENVIRON["date_pattern"]; pathp = ENVIRON["path_pattern"]
}
function report(what) { printf "%s:%d: %s: %s\n", file, NR, what, $0; bad = 1 }
function word(c) { return c ~ /[[:alnum:]_]/ }
{
  line = tolower($0)
  for (i = 1; i <= n; i++) {
    p = pats[i]
    lead = substr(p, 1, 2) == "\\b"
    trail = substr(p, length(p) - 1) == "\\b"
    gsub(/\\b/, "", p)
    rest = line; off = 0
    while (match(rest, p)) {
      s = off + RSTART; e = s + RLENGTH
      pre = s > 1 ? substr(line, s - 1, 1) : " "
      post = e <= length(line) ? substr(line, e, 1) : " "
      if ((!lead || !word(pre)) && (!trail || !word(post))) { report("speaks of past work"); next }
      off = s; rest = substr(line, s + 1)
    }
  }
  if (match(line, datep) && !(kind == "doc" && $0 ~ /^[[:space:]]*\|/)) {
    report("a date outside a figures table"); next
  }
  if (kind == "doc") {
    text = $0
    gsub(/\]\([^)]*\)/, "]()", text)
    if (match(text, pathp)) report("names a path outside the repository")
  }
}
END { exit bad }
AWK

# First the check is shown to work: a probe page with one offence of each kind must fail.
printf '%s\n' 'Measured in round 3 of issue 17.' '| H100 | 2026-11-27 | 1.0 |' \
  'Run it in .device/env.sh first.' > "$tmp/probe.md"
if [ "$(scan probe.md doc "$tmp/probe.md" | wc -l)" -ne 2 ]; then
  echo "history: the check did not find the probe page's two offences (or took its table row); this awk cannot run it"
  exit 99
fi

for f in $docs; do
  [ -f "$f" ] || continue
  scan "$f" doc "$f" || status=1
done

# Code: only comments are prose. Strip everything but /* */ and // comments (keeping line
# numbers), and # comments of shell-like files.
for f in $(find src cl include tools -type f \( -name '*.c' -o -name '*.h' -o -name '*.cl' \
             -o -name '*.h.in' -o -name '*.mk' -o -name '*.sh' -o -name '*.py' \) | sort); do
  case "$f" in
    src/core/cl_sources.c) continue ;; # generated from cl/ by the build
    *.mk | *.sh | *.py) sed -n 's/^[^#]*\(#.*\)$/\1/p; t; s/.*//p' "$f" > "$tmp/c" ;;
    *) awk '
         { out = ""; s = $0
           while (s != "") {
             if (inc) { k = index(s, "*/"); if (!k) { out = out s; s = "" } else { out = out substr(s, 1, k - 1); s = substr(s, k + 2); inc = 0 } }
             else {
               a = index(s, "/*"); b = index(s, "//"); q = index(s, "\"")
               if (q && (!a || q < a) && (!b || q < b)) {   # skip a string literal
                 s = substr(s, q + 1); while (match(s, /^([^"\\]|\\.)*"/)) { s = substr(s, RLENGTH + 1); break }
                 continue
               }
               if (b && (!a || b < a)) { out = out substr(s, b + 2); s = "" }
               else if (a) { s = substr(s, a + 2); inc = 1 }
               else s = ""
             }
           }
           print out }' "$f" > "$tmp/c" ;;
  esac
  scan "$f" code "$tmp/c" || status=1
done

# The anchors a markdown file offers: its <a id="..."> tags and its headings' slugs as GitHub
# makes them (lower case, punctuation but '-' and '_' dropped, spaces to '-').
anchors() {
  sed -n 's/.*<a id="\([^"]*\)">.*/\1/p' "$1"
  sed -n 's/^##* //p' "$1" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9 _-]//g; s/ /-/g'
}

# Relative links of the docs resolve to files of the repository, and their #anchors to a
# heading or an anchor there.
for f in $docs; do
  [ -f "$f" ] || continue
  dir=$(dirname "$f")
  grep -no '](\([^)[:space:]]*\))' "$f" | while IFS= read -r hit; do
    line=${hit%%:*}
    target=${hit#*](}
    target=${target%)}
    case "$target" in http:* | https:* | mailto:* | "") continue ;; esac
    anchor=
    case "$target" in *#*) anchor=${target#*#} ;; esac
    target=${target%%#*}
    if [ -z "$target" ]; then
      path=$src/$f
    else
      path=$(cd "$dir" && realpath -m "$target")
    fi
    case "$path" in
      "$src"/*)
        if [ ! -e "$path" ]; then
          echo "$f:$line: link to a file that does not exist: $target"
        elif [ -n "$anchor" ] && ! anchors "$path" | grep -qx -- "$anchor"; then
          echo "$f:$line: link to an anchor that ${target:-this page} does not have: #$anchor"
        fi ;;
      *) echo "$f:$line: link outside the repository: $target" ;;
    esac
  done > "$tmp/links"
  [ -s "$tmp/links" ] && { cat "$tmp/links"; status=1; }
done

# Code that cites a page of docs/ (docs/scan.md, docs/measurements.md#staging) cites one that
# exists, at an anchor it has.
grep -rnoE 'docs/[A-Za-z0-9_-]+\.md(#[A-Za-z0-9_-]+)?' src cl include tools \
    --include='*.c' --include='*.h' --include='*.cl' --include='*.in' 2> /dev/null |
  grep -v '^src/core/cl_sources\.c:' | while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    line=${rest%%:*}
    ref=${rest#*:}
    page=${ref%%#*}
    if [ ! -f "$page" ]; then
      echo "$file:$line: cites $page, which does not exist"
    else
      case "$ref" in
        *#*) anchors "$page" | grep -qx -- "${ref#*#}" ||
               echo "$file:$line: cites $ref, an anchor $page does not have" ;;
      esac
    fi
  done > "$tmp/cites"
[ -s "$tmp/cites" ] && { cat "$tmp/cites"; status=1; }

[ "$status" -eq 0 ] && echo "history: docs and comments speak of the present; links and citations resolve"
exit "$status"
