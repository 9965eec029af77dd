/**
 * Generated benchmark pages of a given size: a storefront-like mix of
 * navigation, sections of product cards, forms, tables and prose. Runs of
 * similar siblings stay short (eight cards a section), so summarising long
 * runs does not make the pages look smaller than they are.
 *
 * @module
 */

const WORDS = (
  "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november " +
  "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split(" ");

function words(seed: number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(WORDS[(seed * 7 + i * 5 + Math.floor(i / 26)) % WORDS.length]!);
  }
  return out.join(" ");
}

function card(s: number, i: number): string {
  const id = s * 100 + i;
  return `<article class="card"><img alt="Photo ${id}" width="40" height="40">` +
    `<h3><a href="/product/${id}">${words(id, 3)} ${id}</a></h3>` +
    `<p>${words(id + 1, 8)} <span class="price">$${(id % 97) + 0.99}</span></p>` +
    `<button type="button">Add ${id}</button></article>`;
}

function form(s: number): string {
  return `<form class="filters"><label>Search ${s} <input name="q${s}"></label>` +
    `<label>Sort <select name="s${s}"><option>Price</option><option>Rating</option><option>Newest</option></select></label>` +
    `<label><input type="checkbox" name="c${s}"> In stock</label><button>Apply</button></form>`;
}

function table(s: number): string {
  let rows = "";
  for (let r = 0; r < 10; r++) {
    rows += `<tr><td>${s}-${r}</td><td>${words(s + r, 2)}</td><td>${
      (s * r) % 50
    }</td><td><a href="/order/${s}-${r}">View</a></td></tr>`;
  }
  return `<table><thead><tr><th>Order</th><th>Item</th><th>Qty</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * Makes a page with about `elements` elements.
 *
 * @param elements the element count to reach
 * @returns the HTML and the exact element count
 */
export function generatePage(elements: number): { html: string; elements: number } {
  const nav = `<header><nav aria-label="Main">${
    Array.from({ length: 12 }, (_, i) => `<a href="/c/${i}">Category ${i}</a>`).join("")
  }</nav><input type="search" aria-label="Search the store"></header>`;
  const parts: string[] = [nav, "<main>"];
  const count = (html: string) => (html.match(/<[a-z][a-z0-9]*/g) ?? []).length;
  let total = count(nav) + 4; // html, head, title, body
  for (let s = 0; total < elements; s++) {
    let section = `<section><h2>Section ${s}</h2><p>${words(s, 30)}</p><div class="cards">`;
    for (let i = 0; i < 8; i++) section += card(s, i);
    section += "</div>";
    if (s % 5 === 0) section += form(s);
    if (s % 7 === 3) section += table(s);
    section += "</section>";
    parts.push(section);
    total += count(section);
  }
  parts.push("</main><footer><p>Footer text</p></footer>");
  const html = `<!doctype html><html><head><title>Generated ${elements}</title></head><body>${
    parts.join("")
  }</body></html>`;
  return { html, elements: count(html) };
}
