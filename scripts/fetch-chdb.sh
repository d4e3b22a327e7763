#!/usr/bin/env bash
# fetch-chdb.sh — put the pinned chDB engine (libchdb.so) into Hindsight's cache.
#
# The embedded episodic store (store/clickhouse/chdb) loads libchdb.so at run
# time; it ships in the npm package @chdb/lib-linux-x64-gnu. This script
# downloads that package once with `npm pack`, checks it against the pinned
# integrity, and keeps only the library:
#
#   ${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}/chdb/<version>/libchdb.so
#
# A second run finds the verified library and returns at once. Run it with
# --print-path to print where the library is (or would be) without fetching.
#
# Bumping the version: change CHDB_VERSION, CHDB_INTEGRITY and CHDB_LIB_SHA256
# (from `npm view @chdb/lib-linux-x64-gnu@<version> dist.integrity` and
# sha256sum of the extracted libchdb.so) together with chdb.DefaultVersion in
# store/clickhouse/chdb, then run the chDB tests.
set -euo pipefail

CHDB_PACKAGE="@chdb/lib-linux-x64-gnu"
CHDB_VERSION="26.7.3-stable.1"
CHDB_INTEGRITY="sha512-XP97mMqnc5tZpKQywR8N7cLTsHNiTmHr30pC5mzo3jWmukjKn2IBa60c2B/gWUNcuFjOMjWoorQICCqBVj5wpw=="
CHDB_LIB_SHA256="36ad4e999882821ef13cf2d0f52c93f48e6ee1b4498b35a201c23ce4b8d15bf5"

cache="${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}"
dir="$cache/chdb/$CHDB_VERSION"
lib="$dir/libchdb.so"
stamp="$dir/libchdb.so.sha256"

if [[ "${1:-}" == "--print-path" ]]; then
	echo "$lib"
	exit 0
fi

# The stamp is written only after the library was verified, so its presence
# (with the pinned hash) means a complete, checked copy.
if [[ -f "$lib" && -f "$stamp" && "$(cat "$stamp")" == "$CHDB_LIB_SHA256" ]]; then
	echo "chdb: $CHDB_PACKAGE@$CHDB_VERSION already in $dir"
	exit 0
fi

case "$(uname -s)/$(uname -m)" in
Linux/x86_64) ;;
*)
	echo "chdb: $CHDB_PACKAGE is built for Linux x86_64 only; this machine is $(uname -s)/$(uname -m)." >&2
	echo "chdb: point the server adapter at a ClickHouse server instead (CLICKHOUSE_ADDR)." >&2
	exit 1
	;;
esac
if ! command -v npm >/dev/null 2>&1; then
	echo "chdb: npm is needed to download $CHDB_PACKAGE@$CHDB_VERSION; install Node.js and npm first." >&2
	exit 1
fi

mkdir -p "$dir"
work="$(mktemp -d "$dir/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "chdb: downloading $CHDB_PACKAGE@$CHDB_VERSION (about 180 MB) ..."
(cd "$work" && npm pack --silent "$CHDB_PACKAGE@$CHDB_VERSION" >/dev/null)
tgz="$(ls "$work"/*.tgz)"

got="sha512-$(openssl dgst -sha512 -binary "$tgz" | openssl base64 -A)"
if [[ "$got" != "$CHDB_INTEGRITY" ]]; then
	echo "chdb: $tgz has integrity $got, want $CHDB_INTEGRITY; refusing to use it." >&2
	exit 1
fi

tar -xzf "$tgz" -C "$work" package/libchdb.so
got="$(sha256sum "$work/package/libchdb.so" | cut -d' ' -f1)"
if [[ "$got" != "$CHDB_LIB_SHA256" ]]; then
	echo "chdb: libchdb.so has sha256 $got, want $CHDB_LIB_SHA256; refusing to use it." >&2
	exit 1
fi

# Rename into place so that a reader never sees a half-written library.
chmod 0755 "$work/package/libchdb.so"
mv -f "$work/package/libchdb.so" "$lib"
echo "$CHDB_LIB_SHA256" >"$stamp"
echo "chdb: installed $lib"
