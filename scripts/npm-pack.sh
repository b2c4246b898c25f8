#!/usr/bin/env bash
# Fetches the tarball of the npm package PACKAGE@VERSION into DIR with npm
# pack, checks it against INTEGRITY (sha512-<base64>, as package-lock.json
# and the registry write it), and prints its path. Only the tarball is
# fetched: none of the package's scripts runs.
#
#   scripts/npm-pack.sh PACKAGE@VERSION INTEGRITY DIR
set -euo pipefail

pkg="$1" integrity="$2" dir="$3"
# --loglevel=error hides npm's harmless "Unknown user config" warnings.
tgz="$dir/$(cd "$dir" && npm pack "$pkg" --pack-destination "$dir" --loglevel=error | tail -n1)"
got="$(node -e 'const c = require("node:crypto"), fs = require("node:fs");
	process.stdout.write("sha512-" + c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"));' "$tgz")"
if [[ "$got" != "$integrity" ]]; then
	echo "npm-pack: $pkg's tarball is not the one pinned" >&2
	echo "  want $integrity" >&2
	echo "  got  $got" >&2
	exit 1
fi
echo "$tgz"
