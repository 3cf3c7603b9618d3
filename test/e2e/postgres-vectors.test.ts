/**
 * Two real `gligabao serve` processes on one PostgreSQL database, vector_store = "postgres",
 * with fake model servers (Anthropic for the LLM, OpenAI for embeddings): what one process
 * remembers, the other finds by vector at once, both ways, and no vector waits in the outbox
 * (each remember wrote its vectors in its own store transaction).
 */
import { SqlClient } from "@effect/sql"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PgClientLive } from "../../layers/sql/Pg.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { type SpawnedServer, startServer } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { type FakeServer, startFakeAnthropic } from "../support/fakeAnthropic.js"
import { startFakeOpenAi } from "../support/fakeOpenAi.js"

const reason = pgSkipReason()
if (reason !== null) console.warn(`!!! SKIPPING the two-process PostgreSQL vector test: ${reason}`)
const suite = reason === null ? describe : describe.skip

type Json = Record<string, any>

const post = async (url: string, body: Json): Promise<{ status: number; json: Json }> => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })
  return { status: res.status, json: (await res.json()) as Json }
}

suite("two serve processes on one PostgreSQL database, vector_store = \"postgres\"", () => {
  let a: SpawnedServer
  let b: SpawnedServer
  let fakes: ReadonlyArray<FakeServer> = []
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
  const query = (q: string) => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Json>(q)))

  beforeAll(async () => {
    const url = Redacted.value(await Effect.runPromise(freshPgUrl))
    const [anthropic, openai] = await Promise.all([
      startFakeAnthropic({ text: (request) => answer(request.body).text }),
      startFakeOpenAi()
    ])
    fakes = [anthropic, openai]
    const env = {
      ANTHROPIC_API_KEY: "test",
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_API_KEY: "test",
      GLIGABAO_EMBEDDING_BASE_URL: openai.url,
      GLIGABAO_EMBEDDING_DIMENSIONS: "64",
      GLIGABAO_VECTOR_STORE: "postgres"
    }
    const args = ["--database-url", url]
    // one after the other: the first migrates the database
    a = await startServer({ env, args })
    b = await startServer({ env, args })
    runtime = ManagedRuntime.make(PgClientLive(Redacted.make(url)))
  }, 120_000)

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
    await runtime?.dispose()
    await Promise.all(fakes.map((f) => f.close()))
  })

  const remember = async (server: SpawnedServer, text: string) => {
    const res = await post(`${server.url}/v1/gb/remember`, { user_id: "alice", dataset: "main", text })
    expect(res.status, JSON.stringify(res.json)).toBe(200)
    return res.json
  }

  const search = async (server: SpawnedServer, text: string) => {
    const res = await post(`${server.url}/v1/gb/search`, { user_id: "alice", dataset: "main", query: text })
    expect(res.status, JSON.stringify(res.json)).toBe(200)
    return res.json
  }

  const byVector = (found: Json, relation: string) =>
    (found.facts as Array<Json>).filter((f) =>
      f.relation === relation && String(f.found_by).split("+").includes("vector")
    )

  it("both say they use the postgres store (GET /readyz)", async () => {
    for (const server of [a, b]) {
      const res = await fetch(`${server.url}/readyz`)
      const json = (await res.json()) as Json
      expect(res.status, JSON.stringify(json)).toBe(200)
      expect(json.vector_store).toEqual({ name: "postgres", search: "portable binary codes" })
    }
  })

  it("what A remembers, B finds by vector at once, and the other way round", async () => {
    const first = await remember(a, "Alice Novak lives in Lisbon.")
    expect(first.embedded_edges).toBe(1)
    expect(Number((await query(`SELECT COUNT(*) AS n FROM gb_vector_outbox`))[0]!.n)).toBe(0)
    const seenByB = byVector(await search(b, "Alice Novak lives in Lisbon"), "lives_in")
    expect(seenByB.map((f) => f.id)).toEqual([first.edges[0].id])

    const second = await remember(b, "Bruno Costa works at Acme Labs.")
    expect(second.embedded_edges).toBe(1)
    expect(Number((await query(`SELECT COUNT(*) AS n FROM gb_vector_outbox`))[0]!.n)).toBe(0)
    const seenByA = byVector(await search(a, "Bruno Costa works at Acme Labs"), "works_at")
    expect(seenByA.map((f) => f.id)).toEqual([second.edges[0].id])
  }, 60_000)
})
