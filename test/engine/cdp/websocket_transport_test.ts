// The transport contract on the built-in WebSocket transport.
import { WebSocketTransport } from "../../../engine/cdp/websocket_transport.ts";
import { transportContract } from "./_transport_contract.ts";

transportContract({
  name: "WebSocketTransport",
  async open(wsEndpoint) {
    return { transport: await WebSocketTransport.connect(wsEndpoint), dispose: async () => {} };
  },
});
