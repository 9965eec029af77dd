/**
 * What operators and schedulers poll: `GET /health` (capacity and whether
 * the browser is up) and `GET /metrics` (Prometheus text).
 *
 * @module
 */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { HealthBody } from "../protocol.ts";
import { json, type RouteDeps } from "./_shared.ts";

const health = createRoute({
  method: "get",
  path: "/health",
  summary: "Capacity",
  responses: { 200: json(HealthBody, "Live, max and free sessions") },
});

/**
 * Declares `/health` and `/metrics` on the app.
 *
 * @param app the app
 * @param deps the sessions, the counters and the browser's state
 */
export function healthRoutes(
  app: OpenAPIHono,
  { sessions, metrics, browserConnected }: Omit<RouteDeps, "catalog">,
): void {
  app.openapi(health, (c) => {
    const live = sessions.live;
    const browser = browserConnected();
    return c.json({
      status: browser ? "healthy" as const : "degraded" as const,
      live,
      max: sessions.max,
      free: Math.max(0, sessions.max - live),
      browser,
    }, 200);
  });
  app.get("/metrics", (c) =>
    c.text(metrics.render(sessions.live), 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    }));
}
