/**
 * The Node HTTP server `gligabao serve` listens with: one that answers while the app is not
 * attached to it.
 *
 * `NodeHttpServer.layer` listens as soon as its layer is built, but only attaches the app's
 * `request` listener when `HttpApiBuilder.serve` is built, after everything the handlers need
 * (the storage and its migrations, the vector store and its reader thread, ...). Node accepts
 * and parses a request in between and emits `request` to no listener: the request is never
 * answered, and a health checker probing a starting server hangs. So this server has
 * a listener of its own that answers 503 `{"error": "starting"}` whenever it is the only one,
 * and 503 `{"error": "the server is shutting down"}` once the app's listener has come and gone
 * (at shutdown the app detaches before the server closes).
 */
import { createServer, type Server, type ServerOptions } from "node:http"

export const STARTING_MESSAGE = "starting"
export const SHUTTING_DOWN_MESSAGE = "the server is shutting down"

/** A `node:http` server that answers 503 until (and after) another `request` listener serves it. */
export const createStartupAwareServer = (options: ServerOptions = {}): Server => {
  const server = createServer(options)
  let attached = false
  server.on("request", (_request, response) => {
    if (server.listenerCount("request") > 1) return
    const body = JSON.stringify({ error: attached ? SHUTTING_DOWN_MESSAGE : STARTING_MESSAGE })
    response.writeHead(503, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "retry-after": "1",
      // a client that keeps the connection gets the app on it once it is attached; at shutdown
      // there is nothing to come back to
      ...(attached ? { connection: "close" } : {})
    })
    response.end(body)
  })
  server.on("newListener", (event) => {
    if (event === "request") attached = true
  })
  return server
}
