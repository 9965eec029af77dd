console.log("start", performance.now());
const { defaultCatalog } = await import("./adapters/http/catalog.ts");
console.log("imported", performance.now());
const c = defaultCatalog();
const t0 = performance.now();
const p = c.list({ limit: 100 });
const seeds = new Set(p.tasks.map((t) => t.seed));
console.log(p.tasks.length, seeds.size, JSON.stringify(p.tasks[0]), performance.now() - t0);
