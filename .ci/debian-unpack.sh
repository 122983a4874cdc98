#!/usr/bin/env bash
# debian-unpack.sh SUITE PACKAGE DEST PROGRAM [VAR=PATH...] — a program of a
# newer Debian release, for the editor tests on a Debian 12 machine: Neovim
# 0.10 and 0.12 (Debian 12 has 0.7) and Helix (not in Debian 12).
#
# Downloads Debian SUITE's PACKAGE with the packages it depends on, its C
# library included, checks each file against the archive's signed index,
# unpacks them under DEST/root and writes DEST/bin/<name of PROGRAM>, which
# starts PROGRAM (a path inside the package, e.g. usr/bin/nvim) through the
# unpacked dynamic loader, with each VAR set to DEST/root/PATH. Nothing is
# installed on the system; DEST can be deleted at any time. Idempotent: an
# existing wrapper that answers --version is kept.
#
#   debian-unpack.sh trixie neovim DIR usr/bin/nvim VIM=usr/share/nvim VIMRUNTIME=usr/share/nvim/runtime
#   debian-unpack.sh trixie hx DIR usr/lib/hx/hx HELIX_RUNTIME=usr/lib/hx/runtime
set -euo pipefail

usage="usage: debian-unpack.sh SUITE PACKAGE DEST PROGRAM [VAR=PATH...]"
suite=${1:?$usage}
package=${2:?$usage}
dest=${3:?$usage}
program=${4:?$usage}
shift 4
name=$(basename "$program")
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

if [ -x "$dest/bin/$name" ] && "$dest/bin/$name" --version >/dev/null 2>&1; then
  exit 0
fi
for tool in curl gpgv xz dpkg-deb sha256sum python3; do
  command -v "$tool" >/dev/null || { echo "debian-unpack.sh: $tool is required" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() { curl -fsS --retry 3 --max-time 300 -o "$2" "$1"; }

# The signed release file names the checksum of the package index.
fetch "$mirror/dists/$suite/InRelease" "$work/InRelease"
gpgv --keyring "$keyring" --output "$work/Release" "$work/InRelease" 2>"$work/gpgv.log" || {
  cat "$work/gpgv.log" >&2
  echo "debian-unpack.sh: the $suite release file is not signed by a Debian key" >&2
  exit 1
}
want=$(awk '/^SHA256:/{s=1; next} /^[^ ]/{s=0} s && $3=="main/binary-amd64/Packages.xz"{print $1}' "$work/Release")
[ -n "$want" ] || { echo "debian-unpack.sh: no amd64 package index in $suite" >&2; exit 1; }
fetch "$mirror/dists/$suite/main/binary-amd64/Packages.xz" "$work/Packages.xz"
echo "$want  $work/Packages.xz" | sha256sum -c --quiet -
xz -d "$work/Packages.xz"

# The package and everything it depends on (first alternative of each), as
# "filename sha256" lines.
python3 - "$work/Packages" "$package" >"$work/files" <<'EOF'
import sys
index, cur = {}, {}
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if not line:
        if cur:
            index.setdefault(cur["Package"], cur)
        cur = {}
        continue
    if line[0] in " \t":
        continue
    key, _, value = line.partition(": ")
    cur[key] = value
if cur:
    index.setdefault(cur["Package"], cur)
if sys.argv[2] not in index:
    sys.exit("debian-unpack.sh: no package %s in this suite" % sys.argv[2])
seen, todo = set(), [sys.argv[2]]
while todo:
    name = todo.pop()
    if name in seen:
        continue
    seen.add(name)
    pkg = index[name]
    print(pkg["Filename"], pkg["SHA256"])
    for field in ("Pre-Depends", "Depends"):
        for dep in filter(None, (d.strip() for d in pkg.get(field, "").split(","))):
            dep = dep.split("|")[0].split()[0].split(":")[0]
            if dep in index:
                todo.append(dep)
EOF

root="$work/root"
mkdir -p "$root"
while read -r file sum; do
  deb="$work/$(basename "$file")"
  fetch "$mirror/$file" "$deb"
  echo "$sum  $deb" | sha256sum -c --quiet -
  dpkg-deb -x "$deb" "$root"
done <"$work/files"

# Neovim looks for its tree-sitter parsers (usr/lib/nvim/parser) in
# <prefix>/lib/lib/nvim when started from a relocated runtime.
[ -e "$root/usr/lib/lib" ] || ln -s . "$root/usr/lib/lib"
[ -x "$root/$program" ] || { echo "debian-unpack.sh: $package has no $program" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest/bin"
mv "$root" "$dest/root"
{
  echo '#!/bin/sh'
  echo "# $program of Debian $suite's $package, started with its own C library (see .ci/debian-unpack.sh)."
  echo "r='$dest/root'"
  for kv in "$@"; do echo "export ${kv%%=*}=\"\$r/${kv#*=}\""; done
  echo 'exec "$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \'
  echo '  --library-path "$r/usr/lib/x86_64-linux-gnu:$r/lib/x86_64-linux-gnu" \'
  echo "  \"\$r/$program\" \"\$@\""
} >"$dest/bin/$name"
chmod +x "$dest/bin/$name"
"$dest/bin/$name" --version | head -1
