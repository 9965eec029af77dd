#!/usr/bin/env bash
# Sandbox daemons for the tests and the benchmark, on a fresh Debian 12
# machine or one already set up (every step is idempotent):
#   - Incus 6 (bookworm-backports), btrfs-progs, busybox-static, docker.io;
#   - incusd and dockerd started in their own sessions, logs in
#     /var/log/webserv/, waited on until their sockets answer;
#   - Incus storage pools "webserv-btrfs" (btrfs on a loop file: copy-on-write)
#     and "webserv-dir" (plain folders: full copies, for the benchmark);
#   - the demo site's images, built from local files and imported over the
#     daemons' APIs (`deno task image`), and the forum's Incus image (the
#     site checker's Incus test runs on it).
# No network is configured for the containers: they are reached through unix
# sockets in bind-mounted folders.
set -euo pipefail
cd "$(dirname "$0")/.."

INCUS_SOCKET=/var/lib/incus/unix.socket
DOCKER_SOCKET=/var/run/docker.sock
LOGS=/var/log/webserv
mkdir -p "$LOGS"

log() { printf '[daemons] %s\n' "$*"; }

answers() { # answers SOCKET PATH
  curl -sf --max-time 2 --unix-socket "$1" "http://local$2" >/dev/null 2>&1
}

wait_for() { # wait_for NAME SOCKET PATH LOGFILE
  for _ in $(seq 1 150); do
    if answers "$2" "$3"; then return 0; fi
    sleep 0.2
  done
  log "$1 did not answer on $2 within 30 s; its log:"
  tail -n 40 "$4" || true
  return 1
}

# --- packages -----------------------------------------------------------------
need=()
[ -x /usr/libexec/incus/incusd ] || need+=(incus)
command -v mkfs.btrfs >/dev/null 2>&1 || need+=(btrfs-progs)

dpkg -s busybox-static >/dev/null 2>&1 || need+=(busybox-static)
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
if [ ${#need[@]} -gt 0 ]; then
  log "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
    # Backports from the same mirror the machine's bookworm suite comes from.
    mirror=$(awk '/^URIs:/ {uri = $2} /^Suites:/ && / bookworm( |$)/ {print uri; exit}' \
      /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
    [ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' \
      /etc/apt/sources.list 2>/dev/null || true)
    if [ -z "$mirror" ]; then
      log "cannot find apt's bookworm mirror: add the bookworm-backports suite (main) to apt's sources"
      exit 1
    fi
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: %s\n' \
      "$mirror" /usr/share/keyrings/debian-archive-keyring.gpg \
      >/etc/apt/sources.list.d/webserv-backports.sources
  fi
  apt-get update -q
  apt-get install -y -q -t bookworm-backports incus btrfs-progs busybox-static
  apt-get install -y -q docker.io
fi

# --- incusd -------------------------------------------------------------------
if ! answers "$INCUS_SOCKET" /1.0; then
  log "starting incusd"
  # incusd refreshes its instance-type list from an image server at start and
  # daily; a loopback proxy that refuses makes that fail without leaving the
  # machine (only loopback traffic is allowed here).
  HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY= \
    setsid /usr/libexec/incus/incusd --group root >>"$LOGS/incusd.log" 2>&1 </dev/null &
  wait_for incusd "$INCUS_SOCKET" /1.0 "$LOGS/incusd.log"
fi
incus admin waitready --timeout 60

ensure_pool() { # ensure_pool NAME DRIVER [CONFIG...]
  if ! incus storage show "$1" >/dev/null 2>&1; then
    log "creating storage pool $1 ($2)"
    incus storage create "$@" >/dev/null
  fi
}
# 16 GiB: CI unpacks WordPress's, Redmine's and MediaWiki's images into it
# (about 4.2 GiB) beside the site images, and MediaWiki's seeding writes more;
# the loop file is sparse, and a smaller pool made before is grown.
ensure_pool webserv-btrfs btrfs size=16GiB
if [ "$(incus storage get webserv-btrfs size)" != "16GiB" ]; then
  log "growing storage pool webserv-btrfs to 16GiB"
  incus storage set webserv-btrfs size=16GiB
fi
ensure_pool webserv-dir dir
# Loopback HTTPS, so the tests can reach this incusd as a remote host with a
# client certificate.
if [ "$(incus config get core.https_address)" != "127.0.0.1:8443" ]; then
  incus config set core.https_address 127.0.0.1:8443
fi

# --- dockerd ------------------------------------------------------------------
if ! answers "$DOCKER_SOCKET" /_ping; then
  log "starting dockerd"
  setsid dockerd --iptables=false --ip6tables=false --bridge=none \
    >>"$LOGS/dockerd.log" 2>&1 </dev/null &
  wait_for dockerd "$DOCKER_SOCKET" /_ping "$LOGS/dockerd.log"
fi

# --- images -------------------------------------------------------------------
log "building and importing images"
deno task image fixtures/sites/demo/mod.ts
deno task image --no-docker fixtures/sites/forum/mod.ts
log "ready: incus $(incus version 2>/dev/null | tail -n 1 | awk '{print $NF}'), docker $(dockerd --version | awk '{print $3}' | tr -d ,)"
