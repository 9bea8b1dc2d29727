#!/bin/sh
# The C block after the README's "<!-- examples/minimal.c -->" line must be the file.
set -eu
readme=$1
file=$2
block=$(mktemp)
trap 'rm -f "$block"' EXIT
awk '/^<!-- examples\/minimal.c -->$/ { marked = 1; next }
     marked && /^```c$/ { inside = 1; next }
     inside && /^```$/ { exit }
     inside { print }' "$readme" >"$block"
if [ ! -s "$block" ]; then
  echo "README.md has no C block after <!-- examples/minimal.c -->" >&2
  exit 1
fi
diff -u "$file" "$block"
