// The screenshot PNG codec and mark drawing, without a browser.
import { assertEquals, assertRejects } from "@std/assert";
import { decodePng, encodePng } from "../../../engine/observe/_png.ts";
import { drawMarks } from "../../../engine/observe/set_of_marks.ts";

Deno.test("encodePng() output decodes to the same pixels", async () => {
  const width = 37, height = 11;
  const data = new Uint8Array(width * height * 4);
  for (let i = 0; i < data.length; i++) data[i] = (i * 31 + (i >> 7)) & 0xff;
  const png = await encodePng({ width, height, data });
  const back = await decodePng(png);
  assertEquals([back.width, back.height], [width, height]);
  assertEquals(back.data, data);
});

Deno.test("decodePng() rejects bytes that are not a PNG", async () => {
  await assertRejects(() => decodePng(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9])), TypeError);
});

Deno.test("drawMarks() draws the box border and a label above it", () => {
  const image = { width: 60, height: 60, data: new Uint8Array(60 * 60 * 4).fill(255) };
  drawMarks(image, [{ id: 2, box: [10, 30, 30, 20] }], 1);
  const pixel = (x: number, y: number) =>
    Array.from(image.data.slice((y * 60 + x) * 4, (y * 60 + x) * 4 + 3));
  assertEquals(pixel(10, 30), [0, 92, 230]);
  assertEquals(pixel(25, 40), [255, 255, 255], "the inside stays clear");
  assertEquals(pixel(10, 24), [0, 92, 230], "the label sits above the box");
});
