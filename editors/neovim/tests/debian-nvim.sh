#!/usr/bin/env bash
# debian-nvim.sh SUITE DEST — a newer Neovim from Debian's archive, for the
# plugin's tests on a Debian 12 machine (whose own Neovim is 0.7).
#
# Downloads Debian SUITE's neovim (trixie: 0.10, forky: 0.12) with the
# libraries it needs, its C library included, checks each file against the
# archive's signed index, unpacks them under DEST/root and writes DEST/bin/nvim,
# which starts that Neovim through the unpacked dynamic loader. Nothing is
# installed on the system; DEST can be deleted at any time. Idempotent: an
# existing DEST/bin/nvim that runs is kept.
set -euo pipefail

suite=${1:?usage: debian-nvim.sh SUITE DEST}
dest=${2:?usage: debian-nvim.sh SUITE DEST}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

if [ -x "$dest/bin/nvim" ] && "$dest/bin/nvim" --headless --clean -u NONE -es +q >/dev/null 2>&1; then
  exit 0
fi
for tool in curl gpgv xz dpkg-deb sha256sum python3; do
  command -v "$tool" >/dev/null || { echo "debian-nvim.sh: $tool is required" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() { curl -fsS --retry 3 --max-time 300 -o "$2" "$1"; }

# The signed release file names the checksum of the package index.
fetch "$mirror/dists/$suite/InRelease" "$work/InRelease"
gpgv --keyring "$keyring" --output "$work/Release" "$work/InRelease" 2>"$work/gpgv.log" || {
  cat "$work/gpgv.log" >&2
  echo "debian-nvim.sh: the $suite release file is not signed by a Debian key" >&2
  exit 1
}
want=$(awk '/^SHA256:/{s=1; next} /^[^ ]/{s=0} s && $3=="main/binary-amd64/Packages.xz"{print $1}' "$work/Release")
[ -n "$want" ] || { echo "debian-nvim.sh: no amd64 package index in $suite" >&2; exit 1; }
fetch "$mirror/dists/$suite/main/binary-amd64/Packages.xz" "$work/Packages.xz"
echo "$want  $work/Packages.xz" | sha256sum -c --quiet -
xz -d "$work/Packages.xz"

# neovim and everything it depends on (first alternative of each), as
# "filename sha256" lines.
python3 - "$work/Packages" >"$work/files" <<'EOF'
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
seen, todo = set(), ["neovim"]
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
ln -s . "$root/usr/lib/lib"

rm -rf "$dest"
mkdir -p "$dest/bin"
mv "$root" "$dest/root"
cat >"$dest/bin/nvim" <<EOF
#!/bin/sh
# Debian $suite's Neovim, started with its own C library (see debian-nvim.sh).
r='$dest/root'
export VIM="\$r/usr/share/nvim" VIMRUNTIME="\$r/usr/share/nvim/runtime"
exec "\$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" \\
  --library-path "\$r/usr/lib/x86_64-linux-gnu:\$r/lib/x86_64-linux-gnu" \\
  "\$r/usr/bin/nvim" "\$@"
EOF
chmod +x "$dest/bin/nvim"
"$dest/bin/nvim" --version | head -1
