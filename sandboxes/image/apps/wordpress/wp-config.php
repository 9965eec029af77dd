<?php
/*
 * WebServ's WordPress configuration, installed as
 * /etc/wordpress/config-default.php: Debian's wp-config.php falls back to it
 * for every host, and the gateway gives each instance a host of its own
 * (env-<id>.localhost:<port>), so home and siteurl follow the request's Host
 * header instead of a URL stored in the database. Debian's wp-config.php
 * loads wp-settings.php after this file.
 */
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', 'wordpress');
define('DB_HOST', 'localhost:/run/mysqld/mysqld.sock');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
$table_prefix = 'wp_';

$webserv_host = isset($_SERVER['HTTP_HOST']) ? $_SERVER['HTTP_HOST'] : 'localhost';
define('WP_HOME', 'http://' . $webserv_host);
define('WP_SITEURL', 'http://' . $webserv_host);

// Fixed keys: every copy of an image signs cookies the same way, and nothing
// random is generated at run time. The container is never reachable from
// anywhere but this host's loopback gateway.
define('AUTH_KEY', 'webserv-auth-key');
define('SECURE_AUTH_KEY', 'webserv-secure-auth-key');
define('LOGGED_IN_KEY', 'webserv-logged-in-key');
define('NONCE_KEY', 'webserv-nonce-key');
define('AUTH_SALT', 'webserv-auth-salt');
define('SECURE_AUTH_SALT', 'webserv-secure-auth-salt');
define('LOGGED_IN_SALT', 'webserv-logged-in-salt');
define('NONCE_SALT', 'webserv-nonce-salt');

// No network inside the container: no cron over HTTP, no update checks, no
// outgoing requests (each would wait for a DNS answer that never comes).
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_AUTO_UPDATE_CORE', false);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('DISALLOW_FILE_MODS', true);
define('WP_DEBUG', false);

define('WP_CONTENT_DIR', '/var/lib/wordpress/wp-content');
