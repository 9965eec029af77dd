<?php
/*
 * Installs WordPress and fills it from a seed, deterministically: the same
 * seed gives the same users, terms, posts, pages and comments (ids, dates,
 * texts) on every run. Runs once, at an instance's first start, with PHP's
 * CLI inside the container:
 *
 *   php seed.php SEED
 *
 * What is random in WordPress itself is kept out of the state hash: password
 * hashes (salted) and wp_options (install time, cron schedule).
 */
if ($argc < 2 || !ctype_digit($argv[1])) {
    fwrite(STDERR, "Usage: php seed.php SEED\n");
    exit(2);
}
$seed = (int) $argv[1];
const POSTS = 300;
const PAGES = 12;
const USERS = 30;
const COMMENTS = 900;
const BASE_TIME = 1704067200; // 2024-01-01 00:00:00 UTC

$_SERVER['HTTP_HOST'] = 'localhost';
$_SERVER['REQUEST_METHOD'] = 'GET';
define('WP_INSTALLING', true);
require '/usr/share/wordpress/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-includes/pluggable.php';

mt_srand($seed, MT_RAND_MT19937);
function pick(array $list) { return $list[mt_rand(0, count($list) - 1)]; }
function stamp(int $offset): string { return gmdate('Y-m-d H:i:s', BASE_TIME + $offset); }

$WORDS = explode(' ', 'garden river window coffee market paper morning winter harbor bridge ' .
    'lantern orchard violin meadow canyon pepper castle rocket velvet candle ' .
    'forest silver museum island thunder compass bakery planet copper ribbon ' .
    'station theater glacier pebble saddle falcon marble tunnel prairie beacon ' .
    'notebook kitchen bicycle festival library harvest engine cottage summit lagoon');
$FIRST = ['Ada', 'Basil', 'Clara', 'Dmitri', 'Elena', 'Farid', 'Greta', 'Hiro', 'Ines', 'Jonas',
    'Kemi', 'Luca', 'Maya', 'Nils', 'Olga', 'Pablo', 'Quinn', 'Rosa', 'Sami', 'Tara'];
$LAST = ['Adams', 'Berg', 'Costa', 'Diaz', 'Eriksen', 'Fischer', 'Garcia', 'Haddad', 'Ito', 'Jensen',
    'Kowalski', 'Lopez', 'Moreau', 'Novak', 'Okafor', 'Petrov', 'Rossi', 'Silva', 'Tanaka', 'Weber'];

function words(array $words, int $n): string {
    $out = [];
    for ($i = 0; $i < $n; $i++) $out[] = pick($words);
    return implode(' ', $out);
}
function sentence(array $words): string {
    return ucfirst(words($words, mt_rand(6, 14))) . '.';
}
function paragraphs(array $words, int $n): string {
    $blocks = [];
    for ($i = 0; $i < $n; $i++) {
        $text = implode(' ', array_map(fn() => sentence($words), range(1, mt_rand(2, 5))));
        $blocks[] = "<!-- wp:paragraph -->\n<p>$text</p>\n<!-- /wp:paragraph -->";
    }
    return implode("\n\n", $blocks);
}

wp_install('WebServ Press', 'admin', 'admin@webserv.test', true, '', 'admin-password', 'en_US');
// The install's sample content carries the install time: remove it.
foreach (get_posts(['post_type' => 'any', 'post_status' => 'any', 'numberposts' => -1]) as $post) {
    wp_delete_post($post->ID, true);
}
foreach (get_comments() as $comment) wp_delete_comment($comment->comment_ID, true);
update_option('permalink_structure', '');
update_option('posts_per_page', 10);
update_option('blogdescription', 'Stories from the WebServ newsroom');
global $wpdb;
$wpdb->update($wpdb->users, ['user_registered' => stamp(0)], ['user_login' => 'admin']);

$roles = ['author', 'author', 'editor', 'contributor', 'subscriber', 'subscriber'];
$authors = [1];
for ($i = 1; $i <= USERS; $i++) {
    $first = pick($FIRST);
    $last = pick($LAST);
    $login = strtolower($first . '.' . $last . $i);
    $role = pick($roles);
    $id = wp_insert_user([
        'user_login' => $login,
        'user_pass' => $login,
        'user_email' => "$login@webserv.test",
        'first_name' => $first,
        'last_name' => $last,
        'display_name' => "$first $last",
        'role' => $role,
        'user_registered' => stamp($i * 3600),
    ]);
    if (is_wp_error($id)) throw new RuntimeException($id->get_error_message());
    if ($role !== 'subscriber') $authors[] = $id;
}

$categories = [];
foreach (['News', 'Travel', 'Food', 'Science', 'Culture', 'Sports', 'Technology', 'Opinion'] as $name) {
    $categories[] = wp_insert_term($name, 'category')['term_id'];
}
$tags = [];
foreach (array_unique(array_map(fn() => pick($WORDS), range(1, 40))) as $word) {
    $tags[] = wp_insert_term($word, 'post_tag')['term_id'];
}

$posts = [];
for ($i = 1; $i <= POSTS; $i++) {
    $offset = 86400 + $i * 7200 + mt_rand(0, 3599);
    $status = mt_rand(1, 10) === 1 ? 'draft' : 'publish';
    $id = wp_insert_post([
        'post_title' => ucwords(words($WORDS, mt_rand(3, 7))),
        'post_content' => paragraphs($WORDS, mt_rand(2, 6)),
        'post_excerpt' => '',
        'post_status' => $status,
        'post_author' => pick($authors),
        'post_date' => stamp($offset),
        'post_date_gmt' => stamp($offset),
        'post_category' => [pick($categories)],
        'tags_input' => array_map(fn() => (int) pick($tags), range(1, mt_rand(0, 4))),
    ], true);
    if (is_wp_error($id)) throw new RuntimeException($id->get_error_message());
    if ($status === 'publish') $posts[] = $id;
}
for ($i = 1; $i <= PAGES; $i++) {
    $offset = 3600 + $i * 600;
    $id = wp_insert_post([
        'post_title' => ucwords(words($WORDS, mt_rand(1, 3))),
        'post_content' => paragraphs($WORDS, mt_rand(2, 4)),
        'post_status' => 'publish',
        'post_type' => 'page',
        'post_author' => 1,
        'post_date' => stamp($offset),
        'post_date_gmt' => stamp($offset),
        'menu_order' => $i,
    ], true);
    if (is_wp_error($id)) throw new RuntimeException($id->get_error_message());
}
for ($i = 1; $i <= COMMENTS; $i++) {
    $post = pick($posts);
    $first = pick($FIRST);
    $date = stamp(86400 + POSTS * 7200 + $i * 900);
    $id = wp_insert_comment([
        'comment_post_ID' => $post,
        'comment_author' => $first . ' ' . pick($LAST),
        'comment_author_email' => strtolower($first) . "$i@reader.test",
        'comment_author_url' => '',
        'comment_content' => sentence($WORDS) . ' ' . sentence($WORDS),
        'comment_approved' => mt_rand(1, 12) === 1 ? '0' : '1',
        'comment_date' => $date,
        'comment_date_gmt' => $date,
        'comment_author_IP' => '127.0.0.1',
        'comment_agent' => 'webserv-seed',
    ]);
    if (!$id) throw new RuntimeException("Cannot insert comment $i");
}
printf("seeded %d: %d posts, %d pages, %d users, %d comments\n", $seed, POSTS, PAGES, USERS, COMMENTS);
