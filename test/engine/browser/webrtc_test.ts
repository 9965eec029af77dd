// No traffic leaves a page except through its context's proxy: WebRTC's STUN
// over UDP, sent straight to an address the page chose, is off.
import { assert, assertEquals } from "@std/assert";
import { Browser, type LaunchOptions, newContext } from "../../../engine/browser/browser.ts";
import type { CdpSession } from "../../../engine/cdp/connection.ts";
import { serveHtml } from "../../_util/html_server.ts";
import { createSocket } from "node:dgram";

/**
 * Gathers ICE candidates in a page with a STUN server at `port` on loopback,
 * waiting for the gathering to complete (an event, bounded at 10 s).
 */
function gather(session: CdpSession, port: number): Promise<unknown> {
  const expression = `new Promise((resolve, reject) => {
    const pc = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${port}" }] });
    const candidates = [];
    pc.onicecandidate = (event) => { if (event.candidate) candidates.push(event.candidate.candidate); };
    const timer = setTimeout(() => reject(new Error("ICE gathering did not complete within 10 s")), 10000);
    pc.onicegatheringstatechange = () => {
      if (pc.iceGatheringState !== "complete") return;
      clearTimeout(timer);
      pc.close();
      resolve(candidates);
    };
    pc.createDataChannel("x");
    pc.createOffer().then((offer) => pc.setLocalDescription(offer)).catch(reject);
  })`;
  return session.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })
    .then(({ result, exceptionDetails }) => {
      if (exceptionDetails) throw new Error(`gathering threw: ${exceptionDetails.text}`);
      return result.value;
    });
}

/**
 * A STUN binding success answer to `request` (RFC 5389: the same
 * transaction id, the sender's address in XOR-MAPPED-ADDRESS), so that
 * gathering completes at once instead of after the request's retries.
 */
function stunAnswer(request: Uint8Array, address: string, port: number): Uint8Array | undefined {
  if (request.length < 20 || request[0] !== 0x00 || request[1] !== 0x01) return undefined;
  const answer = new Uint8Array(32);
  const view = new DataView(answer.buffer);
  view.setUint16(0, 0x0101); // binding success
  view.setUint16(2, 12); // one attribute of 8 bytes
  answer.set(request.subarray(4, 20), 4); // magic cookie and transaction id
  view.setUint16(20, 0x0020); // XOR-MAPPED-ADDRESS
  view.setUint16(22, 8);
  view.setUint16(24, 0x0001); // IPv4
  view.setUint16(26, port ^ 0x2112);
  const [a = 0, b = 0, c = 0, d = 0] = address.split(".").map(Number);
  view.setUint32(28, (((a << 24) | (b << 16) | (c << 8) | d) ^ 0x2112a442) >>> 0);
  return answer;
}

/**
 * Launches a browser with `options`, opens a page in a context restricted to
 * its own origin (an env's), gathers ICE with a STUN server on a loopback UDP
 * listener, and returns how many datagrams the listener got by the time
 * gathering completed.
 */
async function stunPackets(options: LaunchOptions): Promise<number> {
  await using server = serveHtml({ "/": "<title>env</title>" });
  // node:dgram: Deno.listenDatagram needs --unstable-net.
  const listener = createSocket("udp4");
  let received = 0;
  listener.on("message", (message, from) => {
    received++;
    const answer = stunAnswer(message, from.address, from.port);
    if (answer) listener.send(answer, from.port, from.address);
  });
  const port = await new Promise<number>((resolve, reject) => {
    listener.once("error", reject);
    listener.bind(0, "127.0.0.1", () => resolve(listener.address().port));
  });
  try {
    await using browser = await Browser.launch(options);
    const own = server.url("").replace(/\/$/, "");
    const context = await newContext(browser, { onlyOrigins: [own] });
    const page = await context.newPage(server.url("/"));
    await gather(page.session, port);
    // A page's STUN request is sent before gathering completes; one more
    // round trip to the browser lets the listener's I/O be read.
    await page.session.send("Runtime.evaluate", { expression: "1" });
    return received;
  } finally {
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }
}

Deno.test("a page's WebRTC sends no UDP to an address it chose (STUN on loopback gets nothing)", async () => {
  assertEquals(await stunPackets({}), 0, "the STUN listener got a packet from the page");
});

Deno.test("the same page with WebRTC's UDP policy set back to default does reach the STUN listener", async () => {
  // The control: proves the listener and the page would see the packet.
  const received = await stunPackets({
    args: [
      "--force-webrtc-ip-handling-policy=default",
      "--webrtc-ip-handling-policy=default",
    ],
  });
  assert(received > 0, "the control launch sent no STUN packet: the test cannot fail");
});
