/**
 * Set-of-marks images: a screenshot with a numbered box for each element id
 * in the viewport, drawn onto the decoded screenshot here, so nothing is
 * ever added to the page.
 *
 * @module
 */
import type { WireBox } from "./wire.ts";

/** An RGBA image, 4 bytes a pixel, rows top to bottom. */
export interface RgbaImage {
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** The pixels. */
  data: Uint8Array;
}

/** One mark: an id and its box in CSS pixels of the viewport. */
export interface Mark {
  /** The element id drawn in the label. */
  id: number;
  /** The element's border box, `[x, y, width, height]` in CSS pixels. */
  box: WireBox;
}

const PALETTE: [number, number, number][] = [
  [230, 25, 75],
  [60, 140, 40],
  [0, 92, 230],
  [245, 130, 48],
  [145, 30, 180],
  [0, 140, 140],
  [200, 40, 200],
  [128, 96, 0],
];

/** Digits 0–9 as 3×5 bitmaps, one row a number, high bit left. */
const DIGITS = [
  [7, 5, 5, 5, 7],
  [2, 6, 2, 2, 7],
  [7, 1, 7, 4, 7],
  [7, 1, 7, 1, 7],
  [5, 5, 7, 1, 1],
  [7, 4, 7, 1, 7],
  [7, 4, 7, 5, 7],
  [7, 1, 1, 1, 1],
  [7, 5, 7, 5, 7],
  [7, 5, 7, 1, 7],
];

function fill(
  image: RgbaImage,
  x0: number,
  y0: number,
  w: number,
  h: number,
  [r, g, b]: [number, number, number],
): void {
  const x1 = Math.min(image.width, x0 + w), y1 = Math.min(image.height, y0 + h);
  for (let y = Math.max(0, y0); y < y1; y++) {
    for (let x = Math.max(0, x0); x < x1; x++) {
      const at = (y * image.width + x) * 4;
      image.data[at] = r;
      image.data[at + 1] = g;
      image.data[at + 2] = b;
      image.data[at + 3] = 255;
    }
  }
}

/**
 * Draws numbered boxes onto an image, in place.
 *
 * @param image the decoded screenshot
 * @param marks the boxes, in CSS pixels
 * @param scale device pixels per CSS pixel
 * @returns the same image
 *
 * @example Mark one box on a blank image
 * ```ts
 * import { drawMarks } from "./set_of_marks.ts";
 * const image = { width: 100, height: 50, data: new Uint8Array(100 * 50 * 4) };
 * drawMarks(image, [{ id: 7, box: [10, 10, 40, 20] }], 1);
 * ```
 */
export function drawMarks(image: RgbaImage, marks: readonly Mark[], scale: number): RgbaImage {
  const line = Math.max(2, Math.round(scale * 2));
  const dot = Math.max(2, Math.round(scale * 2));
  for (const mark of marks) {
    const color = PALETTE[mark.id % PALETTE.length]!;
    const x = Math.round(mark.box[0] * scale), y = Math.round(mark.box[1] * scale);
    const w = Math.round(mark.box[2] * scale), h = Math.round(mark.box[3] * scale);
    fill(image, x, y, w, line, color);
    fill(image, x, y + h - line, w, line, color);
    fill(image, x, y, line, h, color);
    fill(image, x + w - line, y, line, h, color);
    const digits = String(mark.id);
    const labelW = digits.length * 4 * dot + dot, labelH = 7 * dot;
    const lx = Math.max(0, Math.min(x, image.width - labelW));
    const ly = y - labelH >= 0 ? y - labelH : y;
    fill(image, lx, ly, labelW, labelH, color);
    for (let d = 0; d < digits.length; d++) {
      const glyph = DIGITS[digits.charCodeAt(d) - 48]!;
      for (let row = 0; row < 5; row++) {
        for (let col = 0; col < 3; col++) {
          if (glyph[row]! & (4 >> col)) {
            fill(image, lx + dot + (d * 4 + col) * dot, ly + dot + row * dot, dot, dot, [
              255,
              255,
              255,
            ]);
          }
        }
      }
    }
  }
  return image;
}
