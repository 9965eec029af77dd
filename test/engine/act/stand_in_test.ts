// The observer and the actions decide alike which visible sibling stands in
// for a hidden checkbox or radio: the element under the observed box of each
// such input's id is the element the actions aim at for that id. Both sides
// import one rule (`engine/page/stand_in.ts`); this fails when they drift.
import { assert, assertEquals } from "@std/assert";
import { Browser, newContext } from "../../../engine/browser/browser.ts";
import { Observer } from "../../../engine/observe/observer.ts";
import { ElementCalls } from "../../../engine/act/_calls.ts";

/** A hidden input (1 px, transparent) between two candidate siblings. */
const HIDDEN = 'style="position:absolute;opacity:0;width:1px;height:1px;margin:0"';
const BOX = "display:inline-block;width:60px;height:20px;border:1px solid";

/** Each row: a hidden input and its siblings, and the id of the stand-in both sides must pick. */
const ROWS: { html: string; standIn: string }[] = [
  // The next span stands in.
  { html: `<input type=checkbox ${HIDDEN}><span id=s1 style="${BOX}">One</span>`, standIn: "s1" },
  // A label for no control before it stands in.
  { html: `<label id=s2 style="${BOX}">Two</label><input type=radio ${HIDDEN}>`, standIn: "s2" },
  // A <b> is no stand-in; the previous span is.
  {
    html: `<span id=s3 style="${BOX}">Three</span><input type=checkbox ${HIDDEN}><b>bold</b>`,
    standIn: "s3",
  },
  // A span holding a link of its own is no stand-in; the previous <i> is.
  {
    html: `<i id=s4 style="${BOX}">Four</i><input type=checkbox ${HIDDEN}>` +
      `<span style="${BOX}"><a href="#x">link</a></span>`,
    standIn: "s4",
  },
  // An empty span has no box to stand in with; the previous div does.
  {
    html: `<div id=s5 style="${BOX}">Five</div><input type=checkbox ${HIDDEN}><span></span>`,
    standIn: "s5",
  },
  // A span painted at opacity 0 is not seen; the previous div is.
  {
    html: `<div id=s6 style="${BOX}">Six</div><input type=checkbox ${HIDDEN}>` +
      `<span style="${BOX};opacity:0">ghost</span>`,
    standIn: "s6",
  },
  // A label for another control is no stand-in; the next span is.
  {
    html: `<label for=other style="${BOX}">Seven</label><input type=checkbox ${HIDDEN}>` +
      `<span id=s7 style="${BOX}">Seven</span><input id=other>`,
    standIn: "s7",
  },
];

const PAGE = "data:text/html," + encodeURIComponent(
  `<!doctype html><body style="margin:0">${
    ROWS.map((row, i) => `<p id=row${i} style="position:relative;margin:8px">${row.html}</p>`)
      .join("")
  }</body>`,
);

Deno.test("the observer and the actions pick the same stand-in for a hidden checkbox or radio", async () => {
  await using browser = await Browser.launch();
  await using context = await newContext(browser);
  const observer = Observer.attach(context);
  const page = await context.newPage(PAGE);
  const { elements } = await observer.observe(page);
  const calls = new ElementCalls(observer, 10_000);
  const at = async (x: number, y: number) => {
    const { result } = await page.session.send("Runtime.evaluate", {
      expression: `document.elementFromPoint(${x}, ${y})?.id ?? ""`,
      returnByValue: true,
    });
    return String(result.value);
  };
  const inputs = elements.filter((e) => e.role === "checkbox" || e.role === "radio");
  assertEquals(inputs.length, ROWS.length, "every hidden input has an id");
  const observed: string[] = [];
  const aimed: string[] = [];
  for (const input of inputs) {
    const [x, y, w, h] = input.box;
    observed.push(await at(x + w / 2, y + h / 2));
    const point = await calls.call(await calls.element(input.id), "POINT");
    assert(point.ok, `the actions find a point for ${input.id}`);
    aimed.push(await at(point.x, point.y));
  }
  const expected = ROWS.map((row) => row.standIn);
  assertEquals(observed, expected, "the observer shows each input at its stand-in");
  assertEquals(aimed, expected, "the actions aim at the same stand-in");
});
