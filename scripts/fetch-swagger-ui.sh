#!/usr/bin/env bash
# Fetches the swagger-ui-dist that package-lock.json pins into
# .cache/swagger-ui-dist/package: its tarball alone, checked against the
# lock's integrity, for the docs page's files. `make run` needs nothing else
# of npm's packages; `make deps` (make test's) installs them all.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/.cache/swagger-ui-dist"
read -r version integrity < <(cd "$root" && node -e '
	const p = require("./package-lock.json").packages["node_modules/swagger-ui-dist"];
	console.log(p.version, p.integrity);')

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tgz="$("$root/scripts/npm-pack.sh" "swagger-ui-dist@$version" "$integrity" "$tmp")"
tar -xzf "$tgz" -C "$tmp"
rm -rf "$dest" && mkdir -p "$dest" && mv "$tmp/package" "$dest/package"
echo "swagger-ui-dist $version is in ${dest#"$root"/}"
