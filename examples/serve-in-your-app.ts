/**
 * gligabao's HTTP API inside an application's own Effect HTTP server: the app's routes and
 * gligabao's (`/v1/gb/*`, `/healthz`, `/openapi.json`, `/docs`) on one port.
 */
import { HttpLayerRouter, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Layer } from "effect"
import { Gligabao } from "gligabao"
import { GligabaoRoutes } from "gligabao/http"
import { createServer } from "node:http"

// the application's own routes
const AppRoutes = HttpLayerRouter.use((router) => router.add("GET", "/hello", HttpServerResponse.text("hello")))

const MemoryLive = Gligabao.layer({
  database: { path: process.env.GLIGABAO_EXAMPLE_DB ?? "memory.db" },
  llm: { apiKey: process.env.ANTHROPIC_API_KEY, baseUrl: process.env.ANTHROPIC_BASE_URL }
})

const ServerLive = HttpLayerRouter.serve(Layer.mergeAll(AppRoutes, GligabaoRoutes)).pipe(
  Layer.provide(MemoryLive),
  Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: Number(process.env.PORT ?? 3000) }))
)

NodeRuntime.runMain(Layer.launch(ServerLive))
