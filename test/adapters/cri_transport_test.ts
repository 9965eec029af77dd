// The transport contract on chrome-remote-interface.
import { assertRejects } from "@std/assert";
import { CriTransport } from "../../adapters/cri_transport.ts";
import { transportContract } from "../engine/cdp/_transport_contract.ts";

transportContract({
  name: "CriTransport",
  async open(wsEndpoint) {
    return { transport: await CriTransport.connect(wsEndpoint), dispose: async () => {} };
  },
});

Deno.test("CriTransport.connect() throws TypeError when the endpoint is not a WebSocket URL", async () => {
  await assertRejects(() => CriTransport.connect("http://127.0.0.1:9222"), TypeError);
});
