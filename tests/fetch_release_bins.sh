#!/bin/sh
# Fetches esbuild's stripped Linux x86-64 release binaries, built by many Go
# versions, from the npm registry, for tests/e2e/test_release_binaries.py.
#
#   tests/fetch_release_bins.sh DIR VERSION...
#
# leaves DIR/VERSION/esbuild for each esbuild VERSION (package
# esbuild-linux-64 before 0.15, @esbuild/linux-x64 from 0.15 on). A binary
# already there is kept: DIR is a cache (the tests use build/release-bins).
# npm checks each tarball against the registry's integrity hash; its own
# cache goes to DIR/.npm, so nothing is written outside DIR.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 DIR VERSION..." >&2
	exit 2
fi
dir=$1
shift
command -v npm >/dev/null || { echo "$0: npm is not installed" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

for v in "$@"; do
	out="$dir/$v/esbuild"
	[ -x "$out" ] && continue
	case "$v" in
	0.[0-9].* | 0.1[0-4].*) pkg=esbuild-linux-64 ;;
	*) pkg=@esbuild/linux-x64 ;;
	esac
	tmp=$(mktemp -d "$dir/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	tgz=$(cd "$tmp" && npm pack --silent --cache "$dir/.npm" "$pkg@$v" | tail -n 1)
	if [ -z "$tgz" ] || [ ! -f "$tmp/$tgz" ]; then
		echo "$0: npm pack $pkg@$v gave no tarball" >&2
		exit 1
	fi
	tar -xzf "$tmp/$tgz" -C "$tmp" package/bin/esbuild
	mkdir -p "$dir/$v"
	chmod 755 "$tmp/package/bin/esbuild"
	mv "$tmp/package/bin/esbuild" "$out.part"
	mv "$out.part" "$out"
	rm -rf "$tmp"
	trap - EXIT
	echo "$pkg@$v -> $out"
done
