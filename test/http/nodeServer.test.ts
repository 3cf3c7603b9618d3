/**
 * The server `gligabao serve` listens with (src/http/nodeServer.ts): until the app's `request`
 * listener is attached it answers 503 `{"error": "starting"}` itself, then leaves every request
 * to the app, and once the app has detached (shutdown) it answers 503 "shutting down". The
 * whole `serve` from process start is tested in test/e2e/startup.test.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { createStartupAwareServer } from "../../src/http/nodeServer.js"

const servers: Array<ReturnType<typeof createStartupAwareServer>> = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

const listening = async () => {
  const server = createStartupAwareServer()
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const call = async (init?: RequestInit) => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, init)
    return { status: res.status, body: await res.json(), connection: res.headers.get("connection") }
  }
  return { server, call }
}

const app = (_request: IncomingMessage, response: ServerResponse) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify({ status: "ok" }))
}

describe("the startup-aware server", () => {
  it("answers 503 starting before the app is attached, also to a request with a body", async () => {
    const { call } = await listening()
    expect(await call()).toMatchObject({ status: 503, body: { error: "starting" } })
    expect(await call({ method: "POST", body: JSON.stringify({ user_id: "alice", text: "x" }) })).toMatchObject({
      status: 503,
      body: { error: "starting" }
    })
  })

  it("leaves every request to the app once it is attached", async () => {
    const { call, server } = await listening()
    server.on("request", app)
    for (let i = 0; i < 3; i++) expect(await call()).toMatchObject({ status: 200, body: { status: "ok" } })
  })

  it("answers 503 shutting down (and closes the connection) once the app has detached", async () => {
    const { call, server } = await listening()
    server.on("request", app)
    server.off("request", app)
    expect(await call()).toEqual({
      status: 503,
      body: { error: "the server is shutting down" },
      connection: "close"
    })
  })
})
