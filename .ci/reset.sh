#!/usr/bin/env bash
# Takes a machine back to what a fresh one has, as far as `.ci/run` is
# concerned, so that a green run proves nothing leaned on an earlier run:
#   - every Incus instance, image and storage pool named webserv*/ws*;
#   - every Docker container and image named webserv*;
#   - the caches `.ci/run` fills: the app images' packages (~/.cache/webserv),
#     Node 22 (~/.cache/webserv-node), the Python venvs (~/.cache/webserv-venv*)
#     and Deno's module cache.
# The daemons and the Debian packages stay installed (a fresh machine's
# apt install is what `.ci/daemons.sh` does first anyway); pass --daemons to
# stop incusd and dockerd too, so that `.ci/run` starts them itself.
#
#   bash .ci/reset.sh [--daemons] && bash .ci/run
set -euo pipefail

log() { printf '[reset] %s\n' "$*"; }

if command -v incus >/dev/null 2>&1 && incus list >/dev/null 2>&1; then
  for name in $(incus list --format csv --columns n | grep -E '^(webserv|ws)' || true); do
    log "incus: deleting instance $name"
    incus delete --force "$name"
  done
  for fingerprint in $(incus image list --format csv --columns f || true); do
    log "incus: deleting image $fingerprint"
    incus image delete "$fingerprint" || true
  done
  for pool in $(incus storage list --format csv --columns n | grep -E '^webserv' || true); do
    for volume in $(incus storage volume list "$pool" --format csv --columns tn || true); do
      type=${volume%%,*}
      [ "$type" = custom ] && incus storage volume delete "$pool" "${volume#*,}" || true
    done
    log "incus: deleting storage pool $pool"
    incus storage delete "$pool" || true
  done
fi

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  for id in $(docker ps -aq --filter name=ws-) $(docker ps -aq --filter name=webserv); do docker rm -f "$id" >/dev/null; done
  for image in $(docker images --format '{{.Repository}}:{{.Tag}}' | grep -E '^webserv' || true); do
    log "docker: deleting image $image"
    docker rmi -f "$image" >/dev/null
  done
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}"
log "removing caches under $cache: webserv, webserv-node, the venvs (test, openenv, verifiers, harnesses, trl), deno"
for dir in "$cache/webserv" "$cache/webserv-node" "${WEBSERV_VENV:-$cache/webserv-venv}" \
  "${WEBSERV_OPENENV_VENV:-$cache/webserv-venv-openenv}" \
  "${WEBSERV_VERIFIERS_VENV:-$cache/webserv-venv-verifiers}" \
  "${WEBSERV_HARNESS_VENV:-$cache/webserv-venv-harnesses}" \
  "${WEBSERV_TRL_VENV:-$cache/webserv-venv-trl}" "${DENO_DIR:-$cache/deno}"; do
  # A Deno process still running elsewhere may write into its cache while it
  # goes: a second pass, then a warning rather than a failed reset.
  rm -rf "$dir" 2>/dev/null || rm -rf "$dir" 2>/dev/null ||
    log "warning: $dir could not be removed whole (a process is writing into it)"
done

if [ "${1:-}" = --daemons ]; then
  log "stopping incusd and dockerd"
  pkill -TERM -x incusd || true
  pkill -TERM -x dockerd || true
fi
log "done: this machine now has none of what an earlier .ci/run left"
