/**
 * Secrets never leak (issue 13, item 6). A real `gligabao serve` runs with known fake keys for
 * every provider (Anthropic, OpenAI embeddings, Pinecone, Jev) and auth tokens, against fake
 * servers that also fail (401, 500) and, at worst, echo the key they were sent in their error
 * message. It remembers (successes, failures, web search, an eval trajectory), searches,
 * queries, is refused, and is read through the run log, the admin API and the documentation.
 * Then everything it produced is searched for the secrets: every response body and header, its
 * stdout and stderr at debug level (JSON and pretty logs, one server each) and the raw bytes of
 * the SQLite database and its WAL. The fakes must have received the keys, so the test cannot
 * pass by a server that never sends them.
 */
import { Redacted, Schema } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scrubSecret } from "../../layers/llm/retry.js"
import { hashEmbedding } from "../../layers/testing/HashEmbeddings.js"
import { AdminDatabasesResponse, AdminDatasetsResponse, AdminRunsResponse } from "../../src/admin/responses.js"
import { Trajectory } from "../../src/domain/Atif.js"
import { EvalRememberSuccess } from "../../src/domain/Responses.js"
import { Error502 } from "../../src/http/ErrorBodies.js"
import { SearchResponse } from "../../src/query/responses.js"
import { type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { anthropicError, anthropicMessage, type RecordedRequest, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { DEFAULT_JEV_ANSWER, jevAnswer, jevError, startFakeJev } from "../support/fakeJev.js"
import type { FakeServer } from "../support/fakeLlmServer.js"
import { embeddingsList, openAiError, startFakeOpenAi } from "../support/fakeOpenAi.js"
import { pineconeError, startFakePinecone } from "../support/fakePinecone.js"

const KEYS = {
  anthropic: "sk-ant-fake-SECRET-1234",
  openai: "sk-fake-SECRET-5678",
  pinecone: "pc-fake-SECRET-9012",
  jev: "jev-fake-SECRET-3456",
  userToken: "tok-user-SECRET-7788-0123456789",
  adminToken: "tok-admin-SECRET-9900-0123456789"
} as const
const SECRETS: ReadonlyArray<string> = Object.values(KEYS)
/** In every secret: finds a partial leak too (a key cut short, or a token in a URL). */
const MARK = "-SECRET-"

/** Texts that make a fake fail: the model (401, 500), the embeddings (500), Jev (401). */
const FAIL = { llm401: "FAIL-LLM-401", llm500: "FAIL-LLM-500", embed: "FAILEMBED", jev: "FAIL-JEV" } as const

const EXTRACT = "You extract a knowledge graph"
const RESOLVE = "You compare new facts"
const WEB = "You research the latest news"
const QUERY = "You answer questions from the facts"

/** The key as a fake received it, from its header. */
const bearer = (request: RecordedRequest) => String(request.headers.authorization ?? "").replace(/^Bearer /, "")
const anthropicKey = (request: RecordedRequest) => String(request.headers["x-api-key"] ?? "") || bearer(request)

const graphOf = (names: ReadonlyArray<string>) => ({
  entities: names.map((name) => ({ name, type: "person", description: `${name}, a person` })),
  edges: names.length < 2
    ? []
    : [{
      source: names[0],
      target: names[1],
      relation: "knows",
      description: `${names[0]} knows ${names[1]}`,
      valid_at: "2024-03-01",
      invalid_at: null
    }]
})

/** A model that answers each stage, and fails, echoing the key it got, when the text asks it to. */
const anthropic = (request: RecordedRequest) => {
  const system = JSON.stringify(request.body?.system ?? "")
  const user = JSON.stringify(request.body?.messages ?? "")
  const key = anthropicKey(request)
  if (user.includes(FAIL.llm401)) return anthropicError(401, `invalid x-api-key: ${key}`)
  if (user.includes(FAIL.llm500)) return anthropicError(500, `internal error for key ${key}`)
  if (system.includes(RESOLVE)) {
    return anthropicMessage({ text: JSON.stringify({ duplicates: [], contradictions: [] }) })
  }
  if (system.includes(WEB)) return anthropicMessage({ text: "Alice Smith opened a bakery in Berlin on 2025-01-10." })
  if (system.includes(QUERY)) return anthropicMessage({ text: JSON.stringify({ answer: "In Berlin.", citations: [] }) })
  if (system.includes(EXTRACT)) {
    const names = user.includes(FAIL.embed) ? ["FAILEMBED Corp", "Alice Smith"] : ["Alice Smith", "Bob Jones"]
    return anthropicMessage({ text: JSON.stringify(graphOf(names)) })
  }
  return anthropicMessage({ text: "A summary." })
}

/** Embeddings of any input; a 500 echoing the key for an input that asks for it. */
const openai = (request: RecordedRequest) => {
  const inputs: ReadonlyArray<string> = Array.isArray(request.body?.input)
    ? request.body.input
    : [String(request.body?.input)]
  if (inputs.some((t) => t.includes(FAIL.embed))) {
    return openAiError(500, `Incorrect API key provided: ${bearer(request)}`)
  }
  const dimensions = request.body?.dimensions ?? 1536
  return embeddingsList({
    vectors: inputs.map((t) => hashEmbedding(t, dimensions)),
    model: request.body?.model,
    encoding: request.body?.encoding_format === "base64" ? "base64" : "float"
  })
}

/** Jev: an answer, or a 401 echoing the key for a text that asks for it. */
const jev = (request: RecordedRequest) =>
  String(request.body?.input ?? "").includes(FAIL.jev)
    ? jevError(401, `invalid api key ${bearer(request)}`)
    : jevAnswer(DEFAULT_JEV_ANSWER)

// ---------------------------------------------------------------------------------------------

interface Exchange {
  readonly what: string
  readonly status: number
  readonly headers: string
  readonly body: string
}

let fakes: { anthropic: FakeServer; openai: FakeServer; jev: FakeServer }
/** one index per server: each server's first vector writes fail */
const pinecones: Partial<Record<"json" | "pretty", FakeServer>> = {}
const dir = tempDir("gligabao-secrets-")
const servers: Record<"json" | "pretty", SpawnedServer | undefined> = { json: undefined, pretty: undefined }

beforeAll(async () => {
  const [a, o, j, pj, pp] = await Promise.all([
    startFakeAnthropic(),
    startFakeOpenAi(),
    startFakeJev({ apiKey: KEYS.jev }),
    startFakePinecone({ apiKey: KEYS.pinecone }),
    startFakePinecone({ apiKey: KEYS.pinecone })
  ])
  a.setHandler(anthropic)
  o.setHandler(openai)
  j.setHandler(jev)
  fakes = { anthropic: a, openai: o, jev: j }
  for (const [format, p] of [["json", pj], ["pretty", pp]] as const) {
    // the first remember's vector writes fail (after its commit; the outbox retries), echoing the key
    p.enqueue(
      pineconeError(500, `internal error for Api-Key ${KEYS.pinecone}`),
      pineconeError(401, `Invalid API Key ${KEYS.pinecone}`)
    )
    pinecones[format] = p
  }

  const env = (format: "json" | "pretty"): Record<string, string> => ({
    ANTHROPIC_API_KEY: KEYS.anthropic,
    ANTHROPIC_BASE_URL: a.url,
    OPENAI_API_KEY: KEYS.openai,
    GLIGABAO_EMBEDDING_BASE_URL: o.url,
    GLIGABAO_VECTOR_STORE: "pinecone",
    PINECONE_API_KEY: KEYS.pinecone,
    PINECONE_INDEX_HOST: pinecones[format]!.url,
    JEV_API_KEY: KEYS.jev,
    JEV_URL: j.url,
    GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: KEYS.userToken, user_id: "alice" }, {
      token: KEYS.adminToken,
      admin: true
    }]),
    GLIGABAO_LLM_MAX_RETRIES: "1",
    GLIGABAO_LOG_LEVEL: "debug",
    GLIGABAO_LOG_FORMAT: format
  })
  const started = await Promise.allSettled((["json", "pretty"] as const).map(async (format) => {
    servers[format] = await startServer({ env: env(format), db: join(dir.path, `${format}.db`) })
  }))
  for (const s of started) if (s.status === "rejected") throw s.reason
})

afterAll(async () => {
  await Promise.all(Object.values(servers).map((s) => s?.stop()))
  await Promise.all([...Object.values(fakes ?? {}), ...Object.values(pinecones)].map((f) => f.close()))
  dir.remove()
})

/** Everything a server produced, for the search at the end. */
const exchanges: Record<"json" | "pretty", Array<Exchange>> = { json: [], pretty: [] }

const call = async (
  format: "json" | "pretty",
  what: string,
  path: string,
  options: { readonly token?: string; readonly body?: unknown } = {}
) => {
  const server = servers[format]!
  const res = await fetch(`${server.url}${path}`, {
    method: options.body === undefined ? "GET" : "POST",
    headers: {
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(60_000)
  })
  const body = await res.text()
  const headers = JSON.stringify([...res.headers.entries()])
  exchanges[format].push({ what, status: res.status, headers, body })
  return {
    status: res.status,
    body,
    /** the parsed body (undefined when it is not JSON), read with the endpoint's schema */
    json: ((): unknown => {
      try {
        return JSON.parse(body)
      } catch {
        return undefined
      }
    })()
  }
}

/** An eval run that failed after it started: the error and the trajectory up to the failure. */
const EvalError = Schema.Struct({ error: Schema.String, trajectory: Trajectory })

describe.each(["json", "pretty"] as const)("a server logging %s at debug level", (format) => {
  const user = (what: string, path: string, body?: unknown) => call(format, what, path, { token: KEYS.userToken, body })
  const admin = (what: string, path: string) => call(format, what, path, { token: KEYS.adminToken })
  const remember = (text: string, extra: Record<string, unknown> = {}) =>
    user(`remember ${text}`, "/v1/gb/remember", { user_id: "alice", text, ...extra })

  it("remembers, fails, searches, queries and is refused as expected", async () => {
    // stored, but its vectors could not be written yet: a 502 that says they will be retried
    const first = await remember("Alice Smith knows Bob Jones.")
    expect(first.status, first.body).toBe(502)
    expect(Schema.decodeUnknownSync(Error502)(first.json).error).toMatch(/retried/)
    expect((await remember("Alice Smith lives in Berlin.", { web_search: true, session_id: "s1" })).status).toBe(200)
    expect((await remember(`Alice, ${FAIL.jev}.`)).status).toBe(200) // the classifier is advisory
    for (const [text, status] of [[FAIL.llm401, 502], [FAIL.llm500, 502], [FAIL.embed, 502]] as const) {
      const res = await remember(`${text}: Alice.`)
      expect(res.status, res.body).toBe(status)
    }
    const evalOk = await user("eval remember", "/v1/gb/eval/remember", {
      user_id: "alice",
      text: "Alice Smith knows Carol."
    })
    expect(evalOk.status).toBe(200)
    expect(Schema.decodeUnknownSync(EvalRememberSuccess)(evalOk.json).trajectory).toBeDefined()
    const evalFailed = await user("eval remember failing", "/v1/gb/eval/remember", {
      user_id: "alice",
      text: `${FAIL.llm401} Alice.`
    })
    expect(evalFailed.status).toBe(502)
    expect(Schema.decodeUnknownSync(EvalError)(evalFailed.json).trajectory).toBeDefined()

    expect((await user("search", "/v1/gb/search", { user_id: "alice", query: "Who does Alice know?" })).status).toBe(
      200
    )
    // the query's embedding fails: the search still answers, with a warning that says why
    const degraded = await user("search failing", "/v1/gb/search", { user_id: "alice", query: `${FAIL.embed} who?` })
    expect(Schema.decodeUnknownSync(SearchResponse)(degraded.json).warnings?.join(" ")).toMatch(/embed/)
    expect((await user("query", "/v1/gb/query", { user_id: "alice", query: "Who does Alice Smith know?" })).status)
      .toBe(200)
    expect(
      (await user("query failing", "/v1/gb/query", {
        user_id: "alice",
        query: `${FAIL.llm401}: who does Alice Smith know?`
      })).status
    ).toBe(502)
    expect((await user("graph", "/v1/gb/graph?user_id=alice&format=graphml")).status).toBe(200)
    expect((await user("datasets", "/v1/gb/datasets?user_id=alice")).status).toBe(200)
    expect((await user("sessions", "/v1/gb/sessions?user_id=alice")).status).toBe(200)

    // refusals: no token, a wrong one, a user token on the admin API, an admin token as a user
    expect((await call(format, "no token", "/v1/gb/search", { body: { user_id: "alice", query: "x" } })).status).toBe(
      401
    )
    expect(
      (await call(format, "wrong token", "/v1/gb/search", {
        token: `${KEYS.userToken}x`,
        body: { user_id: "alice", query: "x" }
      })).status
    ).toBe(401)
    expect((await user("other user", "/v1/gb/search", { user_id: "bob", query: "x" })).status).toBe(403)
    expect((await user("user on admin", "/v1/gb/admin/api/remember-runs")).status).toBe(403)
    expect((await admin("admin as user", "/v1/gb/datasets?user_id=alice")).status).toBe(403)
  })

  it("shows its runs, usage and documentation", async () => {
    const databases = await admin("admin databases", "/v1/gb/admin/api/databases")
    expect(databases.status).toBe(200)
    const db = encodeURIComponent(Schema.decodeUnknownSync(AdminDatabasesResponse)(databases.json).databases[0].name)
    const runs = await admin("admin runs", `/v1/gb/admin/api/remember-runs?db=${db}`)
    expect(runs.status).toBe(200)
    const listed = Schema.decodeUnknownSync(AdminRunsResponse)(runs.json)
    const ids: Array<number> = listed.runs.map((r) => r.id)
    expect(ids.length).toBeGreaterThanOrEqual(8)
    for (const id of ids) {
      expect((await user(`run ${id}`, `/v1/gb/runs/${id}`)).status).toBe(200)
      expect((await admin(`admin run ${id}`, `/v1/gb/admin/api/remember-runs/${id}?db=${db}`)).status).toBe(200)
    }
    // the failed runs say why, and the admin view has their model calls
    const failed = listed.runs.filter((r) => r.status === "failed")
    expect(failed.length).toBeGreaterThanOrEqual(3)
    expect((await admin("admin inferences", `/v1/gb/admin/api/inferences?db=${db}`)).status).toBe(200)
    const datasets = await admin("admin datasets", `/v1/gb/admin/api/datasets?db=${db}`)
    expect(datasets.status).toBe(200)
    for (const d of Schema.decodeUnknownSync(AdminDatasetsResponse)(datasets.json).datasets) {
      expect((await admin(`admin graph ${d.id}`, `/v1/gb/admin/api/graph?db=${db}&dataset_id=${d.id}`)).status).toBe(
        200
      )
    }
    for (const path of ["/openapi.json", "/docs", "/healthz", "/v1/gb/admin/"]) {
      expect((await call(format, path, path)).status).toBe(200)
    }
  })
})

describe("scrubSecret", () => {
  it("replaces every occurrence of the key, and leaves short placeholder keys alone", () => {
    const key = Redacted.make(KEYS.anthropic)
    expect(scrubSecret(`bad key ${KEYS.anthropic}; again ${KEYS.anthropic}.`, key)).toBe(
      "bad key <redacted>; again <redacted>."
    )
    expect(scrubSecret("HTTP 401 invalid key", key)).toBe("HTTP 401 invalid key")
    expect(scrubSecret("x marks the spot", Redacted.make("x"))).toBe("x marks the spot")
    expect(scrubSecret(KEYS.anthropic, undefined)).toBe(KEYS.anthropic)
  })
})

describe("after the runs", () => {
  /** The secrets (and the mark) found in `text`, if any. */
  const leaks = (text: string) => [...SECRETS, MARK].filter((s) => text.includes(s))

  it("the fakes received the keys (so the checks below are not vacuous)", () => {
    expect(fakes.anthropic.requests.some((r) => anthropicKey(r) === KEYS.anthropic)).toBe(true)
    expect(fakes.openai.requests.some((r) => bearer(r) === KEYS.openai)).toBe(true)
    for (const p of Object.values(pinecones)) {
      expect(p.requests.some((r) => r.headers["api-key"] === KEYS.pinecone)).toBe(true)
    }
    expect(fakes.jev.requests.some((r) => bearer(r) === KEYS.jev)).toBe(true)
    // and their failures, echoing the keys, were answered
    for (
      const [fake, marker] of [[fakes.anthropic, FAIL.llm401], [fakes.anthropic, FAIL.llm500], [
        fakes.openai,
        FAIL.embed
      ], [fakes.jev, FAIL.jev]] as const
    ) {
      expect(fake.requests.some((r) => r.rawBody.includes(marker)), marker).toBe(true)
    }
  })

  it.each(["json", "pretty"] as const)("no response of the %s server holds a secret (bodies and headers)", (format) => {
    expect(exchanges[format].length).toBeGreaterThan(30)
    for (const e of exchanges[format]) {
      expect(leaks(e.body), `${e.what}: ${e.body.slice(0, 300)}`).toEqual([])
      expect(leaks(e.headers), `${e.what} headers`).toEqual([])
    }
  })

  /** The raw bytes of a server's database files (the WAL too, while it exists), searched as text. */
  const expectCleanFiles = (format: "json" | "pretty") => {
    const files = readdirSync(dir.path).filter((f) => f.startsWith(`${format}.`))
    expect(files).toContain(`${format}.db`)
    for (const file of files) {
      const bytes = readFileSync(join(dir.path, file))
      // UTF-8, and UTF-16 in case something stored it so
      for (const text of [bytes.toString("latin1"), bytes.toString("utf16le")]) expect(leaks(text), file).toEqual([])
    }
    return files
  }

  it.each(["json", "pretty"] as const)(
    "the %s server's database and its WAL hold no secret while it runs",
    (format) => {
      expect(expectCleanFiles(format)).toContain(`${format}.db-wal`)
    }
  )

  it.each(["json", "pretty"] as const)("the %s server's output holds no secret, at debug level", async (format) => {
    const server = servers[format]!
    // let the outbox retry its failed vector writes, so that their logs are in
    await new Promise((r) => setTimeout(r, 1_500))
    expect(await server.stop()).toEqual({ code: 0, signal: null })
    const output = server.output()
    // debug logging was on: there is plenty to search
    expect(output.length).toBeGreaterThan(2_000)
    expect(output).toMatch(/DEBUG/)
    const found = leaks(output)
    const line = output.split("\n").find((l) => found.some((s) => l.includes(s))) ?? ""
    expect(found, line.slice(0, 500)).toEqual([])
  })

  it.each(["json", "pretty"] as const)("the %s server's database holds no secret after shutdown", (format) => {
    expectCleanFiles(format)
  })
})
