#!/usr/bin/env bash
# release.sh: build coda's release archives, the ones agent.json points at.
#
#   bash scripts/release.sh                       # all six targets into dist/
#   bash scripts/release.sh linux-x86_64 ...      # only these targets
#   DIST=/tmp/out bash scripts/release.sh ...     # somewhere else
#
# Each target is a pure-Go build (CGO_ENABLED=0: no C toolchain or libc needed
# where it runs, and a faster start) packed with the README as
# coda-VERSION-TARGET.tar.gz (.zip for Windows), and every archive's sha256
# goes into SHA256SUMS. VERSION is agent.json's, and is stamped into the
# binary (`coda version`), so the manifest and the binaries cannot disagree.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
dist=${DIST:-$root/dist}
version=$(grep -o '"version": *"[^"]*"' agent.json | head -n 1 | sed 's/.*"\([^"]*\)"$/\1/')
if [[ -z "$version" ]]; then
	echo "release: no version in agent.json" >&2
	exit 1
fi

all=(linux-x86_64 linux-aarch64 darwin-x86_64 darwin-aarch64 windows-x86_64 windows-aarch64)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

mkdir -p "$dist"
work=$(mktemp -d "${TMPDIR:-/tmp}/coda-release.XXXXXX")
trap 'rm -rf "$work"' EXIT

for target in "${targets[@]}"; do
	os=${target%%-*}
	arch=${target#*-}
	case "$arch" in
	x86_64) goarch=amd64 ;;
	aarch64) goarch=arm64 ;;
	*) echo "release: unknown target $target (the targets are ${all[*]})" >&2; exit 2 ;;
	esac
	case "$os" in
	linux | darwin) exe=coda ext=tar.gz ;;
	windows) exe=coda.exe ext=zip ;;
	*) echo "release: unknown target $target (the targets are ${all[*]})" >&2; exit 2 ;;
	esac
	stage="$work/$target"
	mkdir -p "$stage"
	CGO_ENABLED=0 GOOS=$os GOARCH=$goarch go build -trimpath \
		-ldflags "-s -w -X main.version=$version" -o "$stage/$exe" ./cmd/coda
	cp README.md "$stage/"
	archive="$dist/coda-$version-$target.$ext"
	rm -f "$archive"
	if [[ $ext == zip ]]; then
		if command -v zip >/dev/null; then
			(cd "$stage" && zip -q -X "$archive" "$exe" README.md)
		else
			(cd "$stage" && python3 -m zipfile -c "$archive" "$exe" README.md)
		fi
	else
		tar -C "$stage" -czf "$archive" "$exe" README.md
	fi
	echo "built $archive"
done

(cd "$dist" && sha256sum coda-"$version"-*.tar.gz coda-"$version"-*.zip 2>/dev/null > SHA256SUMS || true)
echo "sums in $dist/SHA256SUMS"
