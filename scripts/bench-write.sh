#!/usr/bin/env bash
# Measures the write path of two builds side by side, in one run, on the
# same machine: a baseline commit and the working tree. Each build's
# `hindsight dev` is started fresh for every row and driven over MCP by
# this tree's `hindsight bench write --url`, with the same load.
#
#   scripts/bench-write.sh [BASELINE_COMMIT] [-- bench flags]
#
# BASELINE_COMMIT defaults to e063c77. The bench flags (e.g. --sessions 100)
# apply to both builds.
set -euo pipefail
cd "$(dirname "$0")/.."

baseline=e063c77
if [[ $# -gt 0 && $1 != -- ]]; then
	baseline=$1
	shift
fi
[[ ${1:-} == -- ]] && shift
flags=("$@")

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; git worktree remove --force "$work/baseline" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "building this tree and $baseline…" >&2
# The builds keep their work directories (-work, under $work): deleting
# them would free inodes right before the first rows (see below).
mkdir "$work/gotmp"
export GOTMPDIR=$work/gotmp
go build -work -o "$work/head" ./cmd/hindsight
git worktree add -q "$work/baseline" "$baseline"
(cd "$work/baseline" && go build -work -o "$work/old" ./cmd/hindsight)
unset GOTMPDIR

for i in 0 1 2 3 4 5 6 7; do echo "bench-$i bench-token-$i-$(od -An -tx8 -N8 /dev/urandom | tr -d ' ')"; done >"$work/tokens"

# serve BINARY DATA_DIR: starts `dev` and waits for its banner.
serve() {
	local mcp temporal
	mcp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	temporal=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	CLICKHOUSE_ADDR= MILVUS_ADDR= OPENAI_BASE_URL= "$1" dev --data-dir "$2" --tokens-file "$work/tokens" \
		--mcp-addr "127.0.0.1:$mcp" --temporal-port "$temporal" --ui-port -1 --clickhouse-http "" \
		--log-level error >"$2.out" 2>"$2.err" &
	server=$!
	for _ in $(seq 600); do
		grep -q "Press Ctrl-C" "$2.out" 2>/dev/null && { url="http://127.0.0.1:$mcp/mcp"; return; }
		kill -0 $server 2>/dev/null || { cat "$2.err" >&2; exit 1; }
		sleep 0.2
	done
	echo "$1 dev did not start" >&2
	exit 1
}

rows=("--clients 1 --tenants 1 --stores 0" "--clients 16 --tenants 1 --stores 0" "--clients 16 --tenants 8")
skip=1 # the table's header, printed once
# The builds' rows alternate (HEAD, baseline, HEAD, ...), so that no build's
# row follows its own and each build's rows run in the wake of the other's.
# On ext4 without a journal (these VMs), creating a file skips every inode
# freed in the last one to six minutes, and e063c77's embedded Temporal
# server created and deleted a rollback journal with every commit: a row
# run right after one of its rows ran at about half speed (16 clients on 8
# tenants: 7.6 sessions/s, against 13-15 after a row of this tree). Running
# each build's rows after its own gave the baseline's rows that slowdown
# and spared this tree's; alternating gives it to this tree's rows, which
# follow the baseline's, so the ratios are if anything understated.
for r in "${!rows[@]}"; do
	for name in head old; do
		label=$baseline
		[[ $name == head ]] && label=HEAD
		serve "$work/$name" "$work/data-$name-$r"
		# shellcheck disable=SC2086
		"$work/head" bench write --url "$url" --tokens "$work/tokens" ${rows[$r]} --label "$label" "${flags[@]}" | tail -n +$skip
		skip=2
		kill $server
		wait $server 2>/dev/null || true
	done
done
