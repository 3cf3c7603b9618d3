/**
 * In-process HTTP tests: the real `HttpAppLive` served by `NodeHttpServer.layerTest` on a free
 * 127.0.0.1 port, over whatever services the test provides, and an `HttpClient` whose relative
 * URLs reach that server.
 *
 *   // one server for the block; excludeTestServices gives it the real clock (a `layer`'s
 *   // `it.live` would not see the layer at all)
 *   layer(serveTest(rememberLayer(sqliteLayer(), script)), { excludeTestServices: true })("http", (it) => {
 *     it.effect("...", () => Effect.gen(function*() { const res = yield* postJson("/v1/gb/remember", body) }))
 *   })
 *   // or one server per test
 *   it.live("...", () => program.pipe(Effect.provide(serveTest(rememberLayer(sqliteLayer(), script)))))
 */
import { HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Logger, LogLevel, Stream } from "effect"
import { request as httpRequest } from "node:http"
import { expect } from "vitest"
import { Authentication } from "../../src/auth/Authentication.js"
import { HttpAppLive } from "../../src/http/Http.js"
import { McpSettings } from "../../src/mcp/settings.js"
import { RunSchedulerLive } from "../../src/pipeline/RunScheduler.js"

/**
 * The app served on a test server, with `services` (and the client, server) in the output.
 * Authentication and the MCP settings are those of `services` when they have them, otherwise
 * off and no configured user, as `Gligabao.layer` has them.
 */
export const serveTest = <ROut, E>(services: Layer.Layer<ROut, E>) =>
  HttpAppLive.pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(services),
    // the scheduler of `services` when they have one (a manager's); a fresh one otherwise
    Layer.provide(RunSchedulerLive),
    Layer.provide(Layer.mergeAll(Authentication.off, McpSettings.default)),
    // the request log is noise in test output; errors still show
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

/** A response read whole: status, headers, the raw text and, when it is JSON, the value. */
export interface TestResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** the parsed body, or undefined when it is not JSON */
  readonly json: any
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Sends a request and reads the whole response; transport errors are defects. */
export const send = (request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(request)
    const text = yield* response.text
    return { status: response.status, headers: response.headers, text, json: parse(text) } as TestResponse
  }).pipe(Effect.scoped, Effect.orDie)

export const get = (path: string) => send(HttpClientRequest.get(path))

/** POSTs `raw` as is, labelled JSON (for malformed and oversized bodies). */
export const postRaw = (path: string, raw: string | Uint8Array) =>
  send(
    HttpClientRequest.post(path).pipe(
      typeof raw === "string"
        ? HttpClientRequest.bodyText(raw, "application/json")
        : HttpClientRequest.bodyUint8Array(raw, "application/json")
    )
  )

/** POSTs a body without content-length (chunked), as a streaming client would. */
export const postChunked = (path: string, chunks: ReadonlyArray<string>) =>
  send(
    HttpClientRequest.post(path).pipe(
      HttpClientRequest.bodyStream(Stream.fromIterable(chunks).pipe(Stream.encodeText), {
        contentType: "application/json"
      })
    )
  )

export const postJson = (path: string, body: unknown) => postRaw(path, JSON.stringify(body))

/** A refusal in the wire shape: the status, a JSON body with one non-empty `error` (matching `message`). */
export const expectError = (res: TestResponse, status: number, message?: RegExp) => {
  expect(res.status, res.text.slice(0, 300)).toBe(status)
  expect(res.headers["content-type"]).toContain("application/json")
  expect(Object.keys(res.json ?? {})).toEqual(["error"])
  expect(typeof res.json.error).toBe("string")
  expect(res.json.error.length).toBeGreaterThan(0)
  if (message !== undefined) expect(res.json.error).toMatch(message)
}

/**
 * A request with headers the HTTP client would not send as given (`Host`, `Origin`, any
 * content type), through node:http to the test server's port.
 */
export const sendRaw = (options: {
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
}) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.async<TestResponse>((resume) => {
      const port = (server.address as HttpServer.TcpAddress).port
      const req = httpRequest(
        { host: "127.0.0.1", port, method: options.method, path: options.path, headers: options.headers ?? {} },
        (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (chunk: string) => (text += chunk))
          res.on("end", () => {
            const headers = Object.fromEntries(
              Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : v ?? ""])
            )
            resume(Effect.succeed({ status: res.statusCode ?? 0, headers, text, json: parse(text) }))
          })
        }
      )
      req.on("error", (e) => resume(Effect.die(e)))
      req.end(options.body)
    }))
