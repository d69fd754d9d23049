#!/usr/bin/env bash
# release.sh: build coda's release archives, the ones agent.json points at,
# and the npm packages that start coda with npx on a machine without Go.
#
#   bash scripts/release.sh                          # all six targets into dist/
#   TARGETS=linux-x86_64 bash scripts/release.sh     # only these (spaces or commas)
#   bash scripts/release.sh linux-x86_64 ...         # the same, as arguments
#   DIST=/tmp/out bash scripts/release.sh ...        # somewhere else
#
# Each target is a pure-Go build (CGO_ENABLED=0: no C toolchain or libc needed
# where it runs, and a faster start) packed with the binary users' README
# (docs/README-binary.md), LICENSE and THIRD_PARTY_LICENSES as
# coda-VERSION-TARGET.tar.gz (.zip for Windows); every archive's sha256 goes
# into SHA256SUMS. VERSION is agent.json's, and is stamped into the binary
# (`coda version`) and the npm packages, so none of them can disagree.
#
# Reproducible: two runs on one commit, with the same Go release, give
# byte-identical archives and SHA256SUMS, wherever the checkout is and
# whenever it runs. Every time in an archive is the commit's time
# (SOURCE_DATE_EPOCH, from `git log -1 --format=%ct` unless set, so a source
# tree without .git rebuilds too); entries are sorted, owned by 0:0, mode
# 0755 (the binary) or 0644; the build is -trimpath, -buildvcs=false (the
# same binary from a checkout, a dirty one or an exported tree) and
# -buildid= (no id hashed from the build's inputs' paths); gzip -n stores no
# name or time. It needs GNU tar (gtar on macOS), gzip, and zip for the
# Windows targets.
#
# npm: dist/npm/coda-acp (the launcher package, `npx coda-acp`) and
# dist/npm/coda-PLATFORM-ARCH (@coda-acp/coda-linux-x64 and so on, one per
# built target, its binary under bin/), ready for `npm publish` in each
# directory, platform packages first. Nothing is published from here.
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
if [[ ${#targets[@]} -eq 0 && -n ${TARGETS:-} ]]; then
	read -r -a targets <<<"${TARGETS//,/ }"
fi
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

# The one time every file carries: the commit's.
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
	if ! SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null) || [[ -z $SOURCE_DATE_EPOCH ]]; then
		echo "release: not a git checkout: set SOURCE_DATE_EPOCH to the commit's time (seconds since 1970)" >&2
		exit 1
	fi
fi
if [[ ! $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]]; then
	echo "release: SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH is not a number of seconds" >&2
	exit 1
fi
export SOURCE_DATE_EPOCH

tar=tar
command -v gtar >/dev/null && tar=gtar
if ! "$tar" --version 2>/dev/null | grep -q 'GNU tar'; then
	echo "release: GNU tar is needed for reproducible archives (--sort, --mtime, --owner); on macOS: brew install gnu-tar" >&2
	exit 1
fi
command -v gzip >/dev/null || { echo "release: gzip is needed" >&2; exit 1; }

# The same bytes wherever it runs: no inherited build flags, the baseline
# instruction sets Go defaults to, UTC for zip's local-time stamps, one
# collation for every sort.
unset GOFLAGS GOAMD64 GOARM64 GOEXPERIMENT
export CGO_ENABLED=0 TZ=UTC LC_ALL=C
umask 022

mkdir -p "$dist"
work=$(mktemp -d "${TMPDIR:-/tmp}/coda-release.XXXXXX")
trap 'rm -rf "$work"' EXIT

# npm's names for an operating system and a CPU (process.platform, process.arch).
npm_os() { case $1 in windows) echo win32 ;; *) echo "$1" ;; esac; }
npm_cpu() { case $1 in x86_64) echo x64 ;; aarch64) echo arm64 ;; esac; }

# third_party_licenses GOOS GOARCH: the licence files of every module
# compiled into coda for that target, and the Go distribution's.
third_party_licenses() {
	echo "coda is built with the following, each under its licence, reproduced here."
	local path ver dir f
	while read -r path ver dir; do
		for f in $(ls "$dir" | grep -iE '^(licen[cs]e|copying|notice)' | sort); do
			printf '\n==== %s %s: %s ====\n\n' "$path" "$ver" "$f"
			cat "$dir/$f"
		done
	done < <(GOOS=$1 GOARCH=$2 go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}' ./cmd/coda | sort -u)
	printf '\n==== Go %s (standard library and runtime): LICENSE ====\n\n' "$(go env GOVERSION)"
	cat "$(go env GOROOT)/LICENSE"
}

# stamp FILE...: the commit's time on each file (GNU touch, else BSD's
# date -r; TZ is UTC).
stamp() {
	touch -h -d "@$SOURCE_DATE_EPOCH" "$@" 2>/dev/null ||
		touch -h -t "$(date -u -r "$SOURCE_DATE_EPOCH" +%Y%m%d%H%M.%S)" "$@"
}

built=()
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
	GOOS=$os GOARCH=$goarch go build -trimpath -buildvcs=false \
		-ldflags "-s -w -buildid= -X main.version=$version" -o "$stage/$exe" ./cmd/coda
	cp docs/README-binary.md "$stage/README.md"
	cp LICENSE "$stage/LICENSE"
	third_party_licenses "$os" "$goarch" >"$stage/THIRD_PARTY_LICENSES"
	chmod 0755 "$stage/$exe"
	chmod 0644 "$stage/README.md" "$stage/LICENSE" "$stage/THIRD_PARTY_LICENSES"
	stamp "$stage"/*
	# In byte order: tar and zip keep the order they are given.
	files=($(printf '%s\n' "$exe" LICENSE README.md THIRD_PARTY_LICENSES | sort))
	archive="$dist/coda-$version-$target.$ext"
	rm -f "$archive"
	if [[ $ext == zip ]]; then
		command -v zip >/dev/null || { echo "release: zip is needed for $target" >&2; exit 1; }
		# -X: no extra fields (uid/gid, extended times); -D: no directory
		# entries; the DOS times are the files' (the commit's) in UTC.
		(cd "$stage" && zip -q -X -D -9 "$archive" "${files[@]}")
	else
		"$tar" -C "$stage" --format=gnu --sort=name --mtime="@$SOURCE_DATE_EPOCH" \
			--owner=0 --group=0 --numeric-owner --mode='go-w' \
			-cf - "${files[@]}" | gzip -n -9 >"$archive"
	fi
	built+=("$(basename "$archive")")
	echo "built $archive"

	# The platform's npm package: its binary and nothing to run at install.
	npm_name="coda-$(npm_os "$os")-$(npm_cpu "$arch")"
	pkg="$dist/npm/$npm_name"
	rm -rf "$pkg"
	mkdir -p "$pkg/bin"
	cp -p "$stage/$exe" "$pkg/bin/$exe"
	cp -p "$stage/README.md" "$stage/LICENSE" "$stage/THIRD_PARTY_LICENSES" "$pkg/"
	cat >"$pkg/package.json" <<EOF
{
  "name": "@coda-acp/$npm_name",
  "version": "$version",
  "description": "coda's binary for $(npm_os "$os") $(npm_cpu "$arch"), installed by the coda-acp package",
  "license": "Apache-2.0",
  "repository": {
    "type": "git",
    "url": "git+https://github.com/coda-acp/coda.git"
  },
  "os": ["$(npm_os "$os")"],
  "cpu": ["$(npm_cpu "$arch")"],
  "files": ["bin/$exe", "README.md", "LICENSE", "THIRD_PARTY_LICENSES"],
  "preferUnplugged": true,
  "publishConfig": {
    "access": "public"
  }
}
EOF
	echo "built $pkg"
done

# The launcher package: every platform as an optional dependency, so npm
# installs the one that fits this machine (their os and cpu say which) and
# bin/coda.js runs it.
pkg="$dist/npm/coda-acp"
rm -rf "$pkg"
mkdir -p "$pkg/bin"
cp scripts/npm/coda.js "$pkg/bin/coda.js"
chmod 0755 "$pkg/bin/coda.js"
cp docs/README-binary.md "$pkg/README.md"
cp LICENSE "$pkg/LICENSE"
optional=""
for target in "${all[@]}"; do
	os=${target%%-*}
	arch=${target#*-}
	optional+="${optional:+,
}    \"@coda-acp/coda-$(npm_os "$os")-$(npm_cpu "$arch")\": \"$version\""
done
cat >"$pkg/package.json" <<EOF
{
  "name": "coda-acp",
  "version": "$version",
  "description": "An ACP agent whose every turn ends in one validated final answer. Runs coda's binary for this platform: no Go needed.",
  "license": "Apache-2.0",
  "repository": {
    "type": "git",
    "url": "git+https://github.com/coda-acp/coda.git"
  },
  "keywords": ["acp", "agent-client-protocol", "agent", "llm", "zed"],
  "bin": {
    "coda": "bin/coda.js"
  },
  "files": ["bin/coda.js", "README.md", "LICENSE"],
  "engines": {
    "node": ">=16"
  },
  "optionalDependencies": {
$optional
  }
}
EOF
echo "built $pkg"

# Only this run's archives, one a line, in name order (the names have no
# spaces).
built=($(printf '%s\n' "${built[@]}" | sort))
sha256=(sha256sum)
command -v sha256sum >/dev/null || sha256=(shasum -a 256)
(cd "$dist" && "${sha256[@]}" "${built[@]}" >SHA256SUMS)
echo "sums in $dist/SHA256SUMS"
