#!/usr/bin/env bash
# Runs the differential test of pkg/monocleconfig (TestDifferentialAgainstLibraries): the
# operator's verdicts on thousands of dates, YAML scalars and numbers against those of the
# Haskell libraries Monocle 1.11.2 builds with, computed by test/differential/Oracle.hs.
#
# On a Debian 12 machine it installs what the oracle needs when it is missing (GHC 9.0.2,
# which ships the time library, and HsYAML-aeson, which pulls in HsYAML, aeson and
# scientific), with sudo unless run as root; builds the oracle into the tools cache, under a
# hash of its source and of GHC's version, so an edit rebuilds it and a second run does not;
# and runs the test verbosely, so the counts and the disagreements print.
#
# Environment:
#   TOOLS_CACHE  the cache directory (the Makefile's; default
#                ${XDG_CACHE_HOME:-$HOME/.cache}/monocle-operator/tools)
#   GO           the go command (default: go)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

src=test/differential/Oracle.hs
packages=(ghc libghc-hsyaml-aeson-dev libghc-scientific-dev)
cache=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/monocle-operator/tools}

missing=()
for p in "${packages[@]}"; do
	if [[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]]; then
		missing+=("$p")
	fi
done
if ((${#missing[@]})); then
	sudo=()
	[[ "$(id -u)" == 0 ]] || sudo=(sudo)
	echo "installing ${missing[*]} (apt-get)" >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --no-install-recommends "${missing[@]}" >/dev/null
fi

key=$({ cat "$src"; ghc --numeric-version; } | sha256sum | cut -c1-16)
oracle=$cache/differential-oracle-$key/oracle
if [[ ! -x "$oracle" ]]; then
	echo "building the oracle $oracle (ghc $(ghc --numeric-version))" >&2
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	ghc -O1 -v0 -outputdir "$tmp" -o "$tmp/oracle" "$src"
	mkdir -p "$(dirname "$oracle")"
	mv "$tmp/oracle" "$oracle"
fi

MONOCLE_ORACLE="$oracle" "${GO:-go}" test -count=1 -v -run '^TestDifferentialAgainstLibraries$' ./pkg/monocleconfig/
