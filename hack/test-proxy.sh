#!/usr/bin/env bash
# Runs the test of the Elasticsearch proxy sidecar's nginx.conf with a real NGINX
# (test/proxy: TestProxyWithNginx): Debian's nginx, in front of an HTTPS server with a CA of
# its own that requires basic auth.
#
# On a Debian 12 machine it installs nginx when it is missing (with sudo unless run as root;
# whether the package then starts its own service on port 80 is the machine's policy-rc.d's
# say: the test runs its own nginx on ports of its own either way), then runs the test
# verbosely, so what reached the server and NGINX's log lines print.
#
# Environment:
#   GO  the go command (default: go)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v nginx >/dev/null && [[ ! -x /usr/sbin/nginx ]]; then
	sudo=()
	[[ "$(id -u)" == 0 ]] || sudo=(sudo)
	echo "installing nginx (apt-get)" >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -qq -y --no-install-recommends nginx >/dev/null
fi
nginx=$(command -v nginx || echo /usr/sbin/nginx)

MONOCLE_NGINX="$nginx" "${GO:-go}" test -count=1 -v -run '^TestProxyWithNginx$' ./test/proxy/
