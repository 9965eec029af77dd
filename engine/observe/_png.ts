/**
 * A small PNG codec for screenshots: decodes 8-bit, non-interlaced
 * greyscale, RGB and RGBA images (what Chromium's `Page.captureScreenshot`
 * writes) to RGBA, and encodes RGBA. Deflate is the platform's
 * `CompressionStream`. Format: https://www.w3.org/TR/png-3/
 *
 * @module
 */
import type { RgbaImage } from "./set_of_marks.ts";

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

async function transform(
  bytes: Uint8Array,
  stream: CompressionStream | DecompressionStream,
): Promise<Uint8Array> {
  const output = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(output).arrayBuffer());
}

/**
 * Decodes a PNG.
 *
 * @param png the file's bytes
 * @returns the RGBA image
 * @throws {TypeError} when the bytes are not a PNG this codec reads
 */
export async function decodePng(png: Uint8Array): Promise<RgbaImage> {
  for (let i = 0; i < 8; i++) {
    if (png[i] !== SIGNATURE[i]) throw new TypeError("Cannot decode PNG: bad signature");
  }
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let width = 0, height = 0, colorType = 0;
  const idat: Uint8Array[] = [];
  for (let at = 8; at + 8 <= png.length;) {
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      const depth = body[8], interlace = body[12];
      colorType = body[9] ?? 0;
      if (depth !== 8 || interlace !== 0 || ![0, 2, 4, 6].includes(colorType)) {
        throw new TypeError(
          `Cannot decode PNG: depth "${depth}", colour type "${colorType}", interlace "${interlace}" not supported`,
        );
      }
    } else if (type === "IDAT") idat.push(body);
    else if (type === "IEND") break;
    at += 12 + length;
  }
  const channels = colorType === 6 ? 4 : colorType === 2 ? 3 : colorType === 4 ? 2 : 1;
  const joined = new Uint8Array(idat.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of idat) {
    joined.set(part, offset);
    offset += part.length;
  }
  const raw = await transform(joined, new DecompressionStream("deflate"));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = y * stride;
    const prev = out - stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[out + x - channels]! : 0;
      const b = y > 0 ? pixels[prev + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[prev + x - channels]! : 0;
      let value = line[x]!;
      switch (filter) {
        case 1:
          value += a;
          break;
        case 2:
          value += b;
          break;
        case 3:
          value += (a + b) >> 1;
          break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          value += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
      }
      pixels[out + x] = value & 0xff;
    }
  }
  if (channels === 4) return { width, height, data: pixels };
  const data = new Uint8Array(width * height * 4);
  for (let i = 0, j = 0; i < width * height; i++, j += channels) {
    const grey = channels <= 2;
    data[i * 4] = pixels[j]!;
    data[i * 4 + 1] = grey ? pixels[j]! : pixels[j + 1]!;
    data[i * 4 + 2] = grey ? pixels[j]! : pixels[j + 2]!;
    data[i * 4 + 3] = channels === 2 ? pixels[j + 1]! : 255;
  }
  return { width, height, data };
}

function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(body, 8);
  view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}

/**
 * Encodes an RGBA image as PNG (filter "up" on every row, which suits
 * screenshots).
 *
 * @param image the image
 * @returns the PNG file's bytes
 */
export async function encodePng(image: RgbaImage): Promise<Uint8Array> {
  const { width, height, data } = image;
  const stride = width * 4;
  const raw = new Uint8Array((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const at = y * (stride + 1);
    raw[at] = 2;
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      raw[at + 1 + x] = (data[row + x]! - (y > 0 ? data[row - stride + x]! : 0)) & 0xff;
    }
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 6, 0, 0, 0], 8);
  const parts = [
    new Uint8Array(SIGNATURE),
    chunk("IHDR", header),
    chunk("IDAT", await transform(raw, new CompressionStream("deflate"))),
    chunk("IEND", new Uint8Array(0)),
  ];
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
