#!/usr/bin/env bash
# Starts the rollout server on a fresh Debian or Ubuntu machine: installs Deno
# and Chromium the way .ci/run does when they are missing (or says the exact
# command to run), then runs `deno task serve` with the arguments given.
set -euo pipefail
cd "$(dirname "$0")/../.."

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    echo "Run as root: $*" >&2
    exit 1
  fi
}

if ! command -v deno >/dev/null 2>&1; then
  if command -v npm >/dev/null 2>&1; then
    as_root npm install -g deno@2
  else
    as_root apt-get update
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y npm
    as_root npm install -g deno@2
  fi
fi

if [ -z "${WEBSERV_CHROME:-}" ] && ! command -v chromium-headless-shell >/dev/null 2>&1 &&
  ! command -v chrome-headless-shell >/dev/null 2>&1 && ! command -v chromium >/dev/null 2>&1 &&
  ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  as_root apt-get update
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y chromium-headless-shell
fi

exec deno task serve "$@"
