/**
 * Closed shadow roots, as the isolated world knows them. A closed root is
 * invisible to script (`host.shadowRoot` is `null`), yet what it holds is
 * on screen and in the accessibility tree: a form inside one is a form. The
 * driver finds such roots with CDP (`DOM.describeNode` lists every shadow
 * root, closed ones too) and hands each to this world, which keeps it here
 * beside its host; the distiller and the actions read a host's root through
 * {@linkcode shadowOf} alone, so a closed root is walked, hit-tested and
 * focused as an open one is.
 *
 * Page code: DOM APIs only. The registry lives on the isolated world's
 * global (the distiller's and the actions' bundles share it; page scripts
 * never see it).
 *
 * @module
 */

/** The isolated world's registry of closed roots. */
interface ClosedRoots {
  /** Each known closed root, by host. */
  roots: WeakMap<Element, ShadowRoot>;
  /** Hosts the driver has looked at (a root or none), never asked about again. */
  checked: WeakSet<Element>;
  /** Custom elements met without a visible root, for the driver to look at. */
  suspects: Element[];
}

function registry(): ClosedRoots {
  const g = globalThis as unknown as { __webservClosedRoots?: ClosedRoots };
  return g.__webservClosedRoots ??= {
    roots: new WeakMap(),
    checked: new WeakSet(),
    suspects: [],
  };
}

/**
 * The shadow root of `el`, open or closed (when the driver handed it over).
 *
 * @param el an element
 * @returns its shadow root, or `null`
 */
export function shadowOf(el: Element): ShadowRoot | null {
  const open = (el as HTMLElement).shadowRoot;
  if (open) return open;
  const g = globalThis as unknown as { __webservClosedRoots?: ClosedRoots };
  return g.__webservClosedRoots?.roots.get(el) ?? null;
}

/**
 * Notes a custom element (a name with a hyphen) that shows no shadow root:
 * it may hold a closed one. Each host is noted once in its life.
 *
 * @param el the element
 */
export function noteSuspect(el: Element): void {
  const reg = registry();
  if (reg.checked.has(el)) return;
  reg.checked.add(el);
  if (reg.suspects.length < 500) reg.suspects.push(el);
}

/**
 * How many suspects wait for the driver.
 *
 * @returns the count
 */
export function suspectCount(): number {
  const g = globalThis as unknown as { __webservClosedRoots?: ClosedRoots };
  return g.__webservClosedRoots?.suspects.length ?? 0;
}

/**
 * Hands the suspects to the driver and forgets them.
 *
 * @returns the hosts to look at
 */
export function takeSuspects(): Element[] {
  const reg = registry();
  const out = reg.suspects;
  reg.suspects = [];
  return out;
}

/**
 * Keeps a closed root the driver found.
 *
 * @param host its host
 * @param root the closed root
 */
export function adoptRoot(host: Element, root: ShadowRoot): void {
  registry().roots.set(host, root);
}
