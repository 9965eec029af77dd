#!/usr/bin/env bash
# Real applications in CI: WordPress's image, built from Debian 12
# packages by `deno task image:apps wordpress`, and its application tests on
# Incus (TCP and unix socket) and Docker, plus its tasks run end to end in
# Chromium, and a task forked mid-episode on Incus, Docker and the shared
# runtime. Run by .ci/run after .ci/daemons.sh (the daemons, their pools);
# safe to run again: the build is skipped when Incus already has the image of
# the same inputs, and the packages are cached in ~/.cache/webserv/apps/.
#
# On a fresh machine the package install (mmdebstrap) takes about 6 to 8
# minutes, the rest of the build about a minute, the tests a few minutes
# (bench/results/apps_images.md, docs/applications.md).
# Then Redmine's and MediaWiki's images, and a task of each forked mid-episode
# on Incus, Docker and the shared runtime (about 5 and 10 minutes more to
# build, a few minutes each to test); `deno task test:apps` runs their other
# tests where their images exist.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[apps] %s\n' "$*"; }

# mmdebstrap makes the root filesystem; Debian has it, from the same mirror
# apt already uses (the only place the build downloads from).
if ! command -v mmdebstrap >/dev/null 2>&1; then
  log "installing mmdebstrap"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q mmdebstrap
fi

started=$(date +%s)
log "building the WordPress image"
deno task image:apps wordpress
built=$(date +%s)
log "image ready in $((built - started)) s"

log "WordPress's application tests"
deno test --allow-all test/apps/wordpress_test.ts test/apps/wordpress_tasks_test.ts \
  test/apps/wordpress_fork_test.ts test/apps/wordpress_shared_fork_test.ts
log "tests took $(($(date +%s) - built)) s"

# Each application's fork on every backend: the fork issue's end-to-end check.
for app in redmine mediawiki; do
  started=$(date +%s)
  log "building the $app image"
  deno task image:apps "$app"
  built=$(date +%s)
  log "$app image ready in $((built - started)) s"
  deno test --allow-all "test/apps/${app}_fork_test.ts"
  log "$app fork tests took $(($(date +%s) - built)) s"
done
