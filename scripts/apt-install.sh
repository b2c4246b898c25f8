#!/usr/bin/env bash
# Installs each named command that is not on PATH from the Debian (or
# Ubuntu) package of the same name, with apt-get, as root or through sudo:
# `scripts/apt-install.sh curl jq` for the README's examples, which a test
# runs. A command already on PATH is kept as it is.
set -euo pipefail

missing=()
for cmd in "$@"; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "apt-install: ${missing[*]} not on PATH, and no apt-get to install them: install them yourself" >&2
	exit 1
fi
sudo=()
if [[ "$(id -u)" != 0 ]]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "apt-install: installing ${missing[*]} needs root: run 'apt-get install -y ${missing[*]}' as root" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "Installing ${missing[*]} (apt-get install)"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}"
