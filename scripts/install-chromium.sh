#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test of the demo (test/browser/demo.test.ts),
# which drives /usr/bin/chromium through playwright-core. Debian's package, never
# `npx playwright install`: a browser build downloaded from elsewhere cannot be fetched on
# this project's machines or CI, and the distribution's build is the one every machine gets.
# fonts-liberation gives the screenshots real glyphs; recommends (desktop services, printing)
# are skipped. Idempotent: does nothing but print the version when Chromium is present.
set -euo pipefail

if [ ! -x /usr/bin/chromium ]; then
  echo "install-chromium: /usr/bin/chromium missing; installing Debian's chromium"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
fi

echo "install-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium --version failed')"
