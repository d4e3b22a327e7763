#!/usr/bin/env bash
# install-tools.sh — Debian packages the tests need, installed once.
#
#   docker-compose  validates docker-compose.yml (`docker-compose config`);
#                   no Docker engine is needed for that.
#   chromium        the console's browser test, driven with chromedp
#                   (headless; the Go test finds `chromium` on PATH).
set -euo pipefail

need=()
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [[ ${#need[@]} -eq 0 ]]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-tools: please install: ${need[*]}" >&2
	exit 1
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then
	sudo="sudo"
fi
echo "install-tools: installing ${need[*]} ..."
$sudo apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
