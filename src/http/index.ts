/**
 * `gligabao/http`: the HTTP contract and the served application, to run gligabao's API in an
 * application's own Effect HTTP server (`GligabaoRoutes` for an `HttpLayerRouter`, or
 * `HttpAppLive` for a server of its own). Both need the services of `Gligabao.layer`.
 */
export { GligabaoApi } from "./Api.js"
export { ApiLive, GligabaoRoutes, HttpAppLive, jsonErrors, MOUNTED_PATHS, openApiDocument } from "./Http.js"
export { createStartupAwareServer } from "./nodeServer.js"
export { LOOPBACK_ONLY, type RequestPolicy, RequestPolicyTag } from "./requestGuard.js"
