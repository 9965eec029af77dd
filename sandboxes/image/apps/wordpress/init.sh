#!/bin/bash
# pid 1 of a WebServ WordPress container: MariaDB, then (at the first start
# only) the seed, then Apache on 127.0.0.1:8080, then the state server on
# /run/ws/state.sock. The state socket opens last, so when it answers the
# site is ready. Logs go to /run/ws/*.log, readable from the host.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root DENO_DIR=/var/cache/deno DENO_NO_UPDATE_CHECK=1
LOG=/run/ws/init.log
mkdir -p /run/ws /run/mysqld /var/lib/site
exec >>"$LOG" 2>&1
echo "init: starting at $(date -u +%FT%TZ), seed ${WS_SEED:-0}"
ip link set lo up

fail() { echo "init: $*"; sleep infinity; }

start_mariadb() {
  chown mysql:mysql /run/mysqld
  mariadbd --user=mysql &
  for _ in $(seq 1 600); do
    mariadb-admin --silent ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "MariaDB did not start"
}
start_mariadb

if [ ! -e /var/lib/site/seeded ]; then
  mariadb <<'SQL' || fail "cannot create the database"
CREATE DATABASE IF NOT EXISTS wordpress CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'wordpress'@'localhost' IDENTIFIED BY 'wordpress';
GRANT ALL ON wordpress.* TO 'wordpress'@'localhost';
SQL
  php /srv/wordpress/seed.php "${WS_SEED:-0}" || fail "seeding failed"
  touch /var/lib/site/seeded
  # A clean shutdown writes every page: the seeded snapshot is taken by a
  # forced stop, and each copy then starts with no crash recovery to do.
  mariadb-admin shutdown || fail "MariaDB did not shut down"
  wait
  start_mariadb
fi

apache2ctl start || fail "Apache did not start"
for _ in $(seq 1 300); do
  (exec 3<>/dev/tcp/127.0.0.1/8080) 2>/dev/null && break
  sleep 0.1
done

rm -f /run/ws/state.sock
deno run --allow-all --no-prompt --no-config --no-lock /srv/wordpress/state_server.js &
# pid 1 reaps orphans while it waits.
while true; do wait; sleep 1; done
