/**
 * The plain TypeScript client (`gligabao/client`) as a user runs it: against a spawned
 * `gligabao serve` with a token, the fake model (layers/testing/FactSentenceModel.ts) behind the
 * fake Anthropic API. Every method family once, the typed errors (400, 401, 404, no server at all),
 * the 300 of an ambiguous name, a queued remember followed to its end through its events; the Effect
 * client with an encoded payload; and examples/plain-client.ts, the README's example, run as a script.
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import {
  Gligabao,
  GligabaoConnectionError,
  GligabaoError,
  isEntityCandidates,
  type RememberResult,
  type RunEvent
} from "../../src/client/index.js"
import { makeGligabaoClient } from "../../src/http/effectClient.js"
import { type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { type FakeAnthropic, startFakeAnthropic } from "../support/fakeAnthropic.js"

const TOKEN = "alice-token-0123456789abcdef"
const USER = "alice"

/** The fake model's answers, and a plain answer (no citations) to the query stage. */
const modelText = (body: any): string =>
  JSON.stringify(body?.system ?? "").includes("You answer questions")
    ? JSON.stringify({ answer: "Alice Novak works at Acme.", citations: [] })
    : answer(body).text

let fake: FakeAnthropic
let server: SpawnedServer
let client: Gligabao

beforeAll(async () => {
  fake = await startFakeAnthropic({ text: (request) => modelText(request.body) })
  server = await startServer({
    env: {
      ANTHROPIC_API_KEY: "test",
      ANTHROPIC_BASE_URL: fake.url,
      GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: TOKEN, user_id: USER }])
    }
  })
  client = new Gligabao({ baseUrl: server.url, token: TOKEN })
}, 90_000)

afterAll(async () => {
  await server?.stop()
  await fake?.close()
})

const textOf = (result: RememberResult) => {
  if (!("edges" in result)) throw new Error("a text answered as an image")
  return result
}

describe("gligabao/client against a server", () => {
  it("remembers a text and finds it: search, query, context, export, datasets", async () => {
    const stored = textOf(await client.remember({ user_id: USER, text: "Alice Novak works at Acme in 2020." }))
    expect(stored.edges.map((e) => [e.source, e.relation, e.target])).toEqual([["Alice Novak", "works_at", "Acme"]])

    const found = await client.search({ user_id: USER, query: "Where does Alice Novak work?" })
    expect(found.dataset).toBe("main")
    expect(found.facts.map((f) => f.id)).toContain(stored.edges[0]!.id)

    const answered = await client.query({ user_id: USER, query: "Where does Alice Novak work?" })
    expect(answered.answer).toBe("Alice Novak works at Acme.")

    const context = await client.context({ user_id: USER, query: "Alice Novak" })
    expect(context.context).toContain("Acme")
    expect(context.facts.map((f) => f.id)).toContain(stored.edges[0]!.id)

    const graph = await client.export({ user_id: USER, filters: { entity_types: ["organization"] } })
    expect(graph.entities.map((e) => e.name)).toContain("Acme")
    const graphMl = await client.exportGraphMl({ user_id: USER })
    expect(graphMl).toContain("<graphml")

    const { datasets } = await client.datasets({ user_id: USER })
    expect(datasets.map((d) => d.name)).toEqual(["main"])
  })

  it("queues a remember and follows its events to the end", async () => {
    const queued = await client.remember({
      user_id: USER,
      dataset: "events",
      text: "Bob Stone knows Carol Reed.",
      wait: false
    })
    expect(queued).toMatchObject({ remember_run_id: expect.any(Number), status: "queued" })
    const events: Array<RunEvent> = []
    for await (const event of client.runEvents(queued.remember_run_id)) events.push(event)
    const last = events.at(-1)!
    expect(last.event).toBe("succeeded")
    expect(events.filter((e) => e.event === "succeeded")).toHaveLength(1)
    expect(events.some((e) => e.event === "stage" && e.data.stage === "extract_graph")).toBe(true)
    if (last.event !== "succeeded") throw new Error("not succeeded")
    expect(last.data.response).toMatchObject({ remember_run_id: queued.remember_run_id })

    // a finished run: its final event alone, read from the run
    const again: Array<RunEvent> = []
    for await (const event of client.runEvents(queued.remember_run_id)) again.push(event)
    expect(again.map((e) => [e.event, e.id])).toEqual([["succeeded", undefined]])
    expect((await client.run(queued.remember_run_id)).status).toBe("succeeded")
  })

  it("remembers a batch, queued or waited for", async () => {
    const queued = await client.rememberBatch({
      user_id: USER,
      dataset: "batch",
      items: [{ text: "Dan Moss lives in Oslo." }, { text: "Eve Hart visited Rome in 2019." }]
    })
    expect(queued.runs).toHaveLength(2)
    for (const run of queued.runs) expect((await client.waitForRun(run.remember_run_id)).status).toBe("succeeded")
    const waited = await client.rememberBatch({
      user_id: USER,
      dataset: "batch",
      wait: true,
      items: [{ text: "Fay Lund works at Initech." }]
    })
    expect(waited.items).toHaveLength(1)
    expect(waited.items[0]).toMatchObject({ edges: [{ source: "Fay Lund", target: "Initech" }] })
  })

  it("an entity by name, the candidates of an ambiguous one, a fact, a correction and a forget", async () => {
    const dataset = "people"
    const first = textOf(await client.remember({ user_id: USER, dataset, text: "Gus Berg lives in Paris in 2020." }))
    await client.remember({ user_id: USER, dataset, text: "Gus Lind works at Acme." })

    const story = await client.entity({ user_id: USER, dataset, name: "gus berg" })
    if (isEntityCandidates(story)) throw new Error("one entity answered as candidates")
    expect(story.entity.name).toBe("Gus Berg")
    const byId = await client.entity({ user_id: USER, dataset, id: story.entity.id })
    expect(byId.entity.id).toBe(story.entity.id)
    const ambiguous = await client.entity({ user_id: USER, dataset, name: "Gus" })
    if (!isEntityCandidates(ambiguous)) throw new Error("an ambiguous name answered one entity")
    expect(ambiguous.candidates.map((c) => c.name).sort()).toEqual(["Gus Berg", "Gus Lind"])

    const factId = first.edges[0]!.id
    const fact = await client.fact({ user_id: USER, dataset, id: factId })
    expect(fact.fact).toMatchObject({ id: factId, source: "Gus Berg", target: "Paris" })

    const closed = await client.correctInvalidateFact(factId, {
      user_id: USER,
      dataset,
      invalid_at: "2024-01-01T00:00:00Z"
    })
    expect(closed.fact.invalid_at).toBe("2024-01-01T00:00:00.000Z")
    const reopened = await client.correctReopenFact(factId, { user_id: USER, dataset })
    expect(reopened.fact.invalid_at ?? null).toBeNull()

    const forgotten = await client.forgetArtifact({ user_id: USER, dataset, id: first.artifact_id })
    expect(forgotten.deleted).toMatchObject({ artifacts: 1, facts: 1 })
    const missing = await client.fact({ user_id: USER, dataset, id: factId }).catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(GligabaoError)
    expect((missing as GligabaoError).status).toBe(404)
  })

  it("answers a bad request, a wrong token and no server with typed errors", async () => {
    const bad = await client.search({ user_id: USER } as never).catch((e: unknown) => e)
    expect(bad).toBeInstanceOf(GligabaoError)
    expect(bad).toMatchObject({ status: 400, error: "query is required", body: { error: "query is required" } })

    const stranger = new Gligabao({ baseUrl: server.url, token: "not-a-token-of-this-server" })
    const refused = await stranger.search({ user_id: USER, query: "Acme" }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(GligabaoError)
    expect(refused).toMatchObject({ status: 401, error: expect.stringMatching(/token/i) })

    // a port nothing listens on: the server's own port, once it is gone, is not known yet; ask the OS
    const nowhere = new Gligabao({ baseUrl: "http://127.0.0.1:9", token: TOKEN })
    const unreachable = await nowhere.health().catch((e: unknown) => e)
    expect(unreachable).toBeInstanceOf(GligabaoConnectionError)
    expect(unreachable).not.toBeInstanceOf(GligabaoError)
  })

  it("the Effect client takes an encoded payload: user_id and query only", async () => {
    const found = await Effect.runPromise(
      Effect.gen(function*() {
        const effectClient = yield* makeGligabaoClient(server.url, { token: TOKEN })
        return yield* effectClient.read.search({ payload: { user_id: USER, query: "Acme" } })
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(found.dataset).toBe("main")
    expect(found.entities.map((e) => e.name)).toContain("Acme")
  })

  it("examples/plain-client.ts (the README's example) runs against the server", async () => {
    // the example imports "gligabao/client"; here that is the source, as the package maps it
    const dir = tempDir("gligabao-client-example-")
    try {
      const source = readFileSync(fileURLToPath(new URL("../../examples/plain-client.ts", import.meta.url)), "utf8")
      const clientIndex = fileURLToPath(new URL("../../src/client/index.js", import.meta.url))
      expect(source).toContain("from \"gligabao/client\"")
      expect(source).not.toMatch(/from "effect|@effect\//)
      const script = join(dir.path, "plain-client.ts")
      writeFileSync(script, source.replace("from \"gligabao/client\"", `from ${JSON.stringify(clientIndex)}`))
      const tsx = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url))
      const { stdout } = await promisify(execFile)(process.execPath, [tsx, script], {
        env: { PATH: process.env.PATH ?? "", GLIGABAO_URL: server.url, GLIGABAO_TOKEN: TOKEN },
        timeout: 120_000
      })
      expect(stdout).toContain("Alice Smith lives in Paris")
      expect(stdout).toMatch(/^400: query/m)
    } finally {
      dir.remove()
    }
  }, 150_000)
})
