#!/usr/bin/env bash
# Installs Debian's redis-server for the cluster tests (test/cluster/**), which start their
# own redis-server processes on random loopback ports and stop them afterwards. The package's
# own service is not used: tests never share a server, and CI runs with none running.
# Idempotent: does nothing but print the version when redis-server is present.
set -euo pipefail

if ! command -v redis-server >/dev/null 2>&1; then
  echo "install-redis: redis-server missing; installing Debian's redis-server"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  # The package starts a system service on :6379; the tests never use it.
  (command -v service >/dev/null && "${sudo_cmd[@]}" service redis-server stop >/dev/null 2>&1) || true
fi

echo "install-redis: $(redis-server --version 2>/dev/null || echo 'redis-server --version failed')"
