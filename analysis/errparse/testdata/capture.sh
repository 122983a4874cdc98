# capture.sh — sourced by generate.sh and heldout/generate.sh, with the
# fixture patterns as its arguments. It copies $here/programs into a fresh
# temporary workspace ($ws; $wsreal is its physical path), exports a
# deterministic, offline, uncoloured environment and defines:
#   have CMD            — CMD is on PATH
#   skip WHAT WHY       — report a fixture left as it is
#   selected NAME       — NAME matches a pattern (all do without patterns)
#   capture NAME DIR CMD... — run CMD in $ws/DIR, stdout and stderr
#     together, into $here/outputs/NAME.txt with the workspace path
#     replaced by the literal $WORKSPACE.
# The caller sets $here (the directory holding programs/ and outputs/).

out=$here/outputs
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/errparse.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
ws=$tmp/ws
cp -R "$here/programs" "$ws"
# The physical path too, for systems where the temp dir is behind a symlink.
wsreal=$(cd "$ws" && pwd -P)

export PATH="$PATH:$HOME/.cargo/bin"
# Deterministic, offline, uncoloured where the tool allows it.
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS='' GOWORK=off
export CARGO_TARGET_DIR=$tmp/target CARGO_TERM_COLOR=never
export NO_COLOR=1 FORCE_COLOR=0
# gcc prints typographic quotes (‘x’) in a UTF-8 locale, as most users see.
export LC_ALL=C.UTF-8 LANG=C.UTF-8

have() { command -v "$1" >/dev/null 2>&1; }
skip() { echo "skip $1: $2" >&2; }

patterns=("$@")
selected() {
	[ ${#patterns[@]} -eq 0 ] && return 0
	local p
	for p in "${patterns[@]}"; do
		# shellcheck disable=SC2053 # glob match on purpose
		[[ $1 == $p ]] && return 0
	done
	return 1
}

capture() {
	local name=$1 dir=$2
	shift 2
	selected "$name" || return 0
	local raw=$tmp/$name.raw
	(cd "$ws/$dir" && "$@") >"$raw" 2>&1
	# Longest path first so the physical path is not half-replaced.
	sed -e "s|$wsreal|\$WORKSPACE|g" -e "s|$ws|\$WORKSPACE|g" "$raw" >"$out/$name.txt"
	echo "wrote outputs/$name.txt ($(wc -l <"$out/$name.txt") lines)"
}
