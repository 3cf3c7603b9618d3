import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** A request as the fake received it. */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  /** lower-cased names, as node:http gives them */
  readonly headers: IncomingHttpHeaders
  /** the parsed JSON body, or undefined when it is not JSON */
  readonly body: any
  readonly rawBody: string
}

/** What to answer: `json` (sent as application/json) or a `raw` body, after an optional delay. */
export interface FakeReply {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  readonly json?: unknown
  /** a body sent as is (content-type application/json unless headers say otherwise) */
  readonly raw?: string
  /** overrides the server's latency for this reply */
  readonly delayMs?: number
}

export type FakeHandler = (request: RecordedRequest) => FakeReply | Promise<FakeReply>

export interface FakeServer {
  /** what to give the SDK as its base URL */
  readonly url: string
  readonly requests: Array<RecordedRequest>
  /** one-shot replies (or handlers), used in order before the handler */
  readonly enqueue: (...replies: ReadonlyArray<FakeReply | FakeHandler>) => void
  /** replaces the handler used once the queue is empty; undefined restores the default */
  readonly setHandler: (handler: FakeHandler | undefined) => void
  /** delay before every reply (default 0) */
  readonly setLatency: (ms: number) => void
  /** back to the start: no recorded requests, no queued replies, the default handler and latency */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

export interface FakeServerOptions {
  readonly defaultHandler: FakeHandler
  /** `request-id` (Anthropic) or `x-request-id` (OpenAI) */
  readonly requestIdHeader: string
  /** appended to the root URL to make `url` (e.g. "/v1" for OpenAI) */
  readonly urlSuffix?: string
  readonly latencyMs?: number
}

/** A node:http server on 127.0.0.1, port 0, that records requests and answers scripted replies. */
export const startFakeServer = async (options: FakeServerOptions): Promise<FakeServer> => {
  const requests: Array<RecordedRequest> = []
  const queue: Array<FakeReply | FakeHandler> = []
  const timers = new Set<NodeJS.Timeout>()
  let handler: FakeHandler | undefined
  let latencyMs = options.latencyMs ?? 0
  let counter = 0

  const send = (res: ServerResponse, reply: FakeReply) => {
    // the client may have given up (timeout) while we waited
    if (res.destroyed || res.writableEnded) return
    const body = reply.raw ?? (reply.json === undefined ? "" : JSON.stringify(reply.json))
    res.writeHead(reply.status ?? 200, {
      "content-type": "application/json",
      [options.requestIdHeader]: `req_fake_${++counter}`,
      ...reply.headers
    })
    res.end(body)
  }

  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8")
      let body: unknown
      try {
        body = rawBody === "" ? undefined : JSON.parse(rawBody)
      } catch {
        body = undefined
      }
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        body,
        rawBody
      }
      requests.push(recorded)
      const next = queue.shift() ?? handler ?? options.defaultHandler
      Promise.resolve(typeof next === "function" ? next(recorded) : next).then(
        (reply) => {
          const delay = reply.delayMs ?? latencyMs
          if (delay <= 0) return send(res, reply)
          const timer = setTimeout(() => {
            timers.delete(timer)
            send(res, reply)
          }, delay)
          timers.add(timer)
        },
        (error: unknown) => send(res, { status: 500, json: { error: { message: String(error) } } })
      )
    })
  })

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}${options.urlSuffix ?? ""}`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    setHandler: (next) => void (handler = next),
    setLatency: (ms) => void (latencyMs = ms),
    reset: () => {
      requests.length = 0
      queue.length = 0
      handler = undefined
      latencyMs = options.latencyMs ?? 0
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      })
  }
}

/** A rough token count (4 characters a token), enough for realistic usage figures. */
export const roughTokens = (value: unknown): number =>
  Math.max(1, Math.ceil((typeof value === "string" ? value : JSON.stringify(value ?? "")).length / 4))
