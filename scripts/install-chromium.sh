#!/usr/bin/env bash
# Installs Chromium for the browser tests (`make e2e`), which drive it
# headless with puppeteer-core: Debian's chromium-headless-shell package,
# Chromium's build for automation, lighter than the whole browser (see
# docs/testing.md), or the chromium package where apt has none (Ubuntu),
# with apt-get, as root or through sudo. A Chromium that already runs, on
# PATH or named by CHROMIUM, is kept as it is. npm packages that download a
# browser of their own are not used: the system's is the one kept up to date.
set -euo pipefail

runs() { "$1" --version >/dev/null 2>&1; }

if [[ -n "${CHROMIUM:-}" ]]; then
	if runs "$CHROMIUM"; then
		echo "Chromium: $("$CHROMIUM" --version 2>/dev/null) (CHROMIUM=$CHROMIUM)"
		exit 0
	fi
	echo "install-chromium: CHROMIUM=$CHROMIUM does not run" >&2
	exit 1
fi
for name in chromium-headless-shell chromium chromium-browser; do
	if command -v "$name" >/dev/null 2>&1 && runs "$name"; then
		echo "Chromium: $("$name" --version 2>/dev/null) ($(command -v "$name"))"
		exit 0
	fi
done

install="$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"
for name in chromium-headless-shell chromium; do
	if "$install" "$name" && runs "$name"; then
		echo "Chromium: $("$name" --version 2>/dev/null) ($(command -v "$name"))"
		exit 0
	fi
done
echo "install-chromium: no Chromium was installed that runs" >&2
exit 1
