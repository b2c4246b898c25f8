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
# --loglevel=error hides npm's harmless "Unknown user config" warnings.
tgz="$(cd "$tmp" && npm pack "swagger-ui-dist@$version" --pack-destination "$tmp" --loglevel=error | tail -n1)"
got="sha512-$(openssl dgst -sha512 -binary "$tmp/$tgz" | openssl base64 -A)"
if [[ "$got" != "$integrity" ]]; then
	echo "fetch-swagger-ui: $tgz is not the one package-lock.json pins" >&2
	echo "  want $integrity" >&2
	echo "  got  $got" >&2
	exit 1
fi
tar -xzf "$tmp/$tgz" -C "$tmp"
rm -rf "$dest" && mkdir -p "$dest" && mv "$tmp/package" "$dest/package"
echo "swagger-ui-dist $version is in ${dest#"$root"/}"
