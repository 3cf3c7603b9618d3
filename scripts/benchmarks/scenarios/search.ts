/**
 * Search: `POST /v1/gb/search` (limit 10) over HTTP on a dataset of `searchFacts` facts (and
 * facts/5 entities, every one with its vector in sqlite-vec), seeded in this process through the
 * repositories (scripts/benchmarks/searchData.ts). Full text only (a server without embeddings,
 * hops 0), full text + vectors (hops 0), and the default search (vectors and the graph
 * neighbourhood, hops 1); sequential questions after a warm-up.
 */
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { SqliteLive } from "../../../layers/sql/index.js"
import { SqliteVecStoreLive } from "../../../layers/vectors/SqliteVecStore.js"
import { type Context, withServer } from "../context.js"
import { fmt, ratio, type Stats, stats } from "../report.js"
import { questions, resetRandom, seedDataset } from "../searchData.js"
import { type ConfigName, request, type Server } from "../server.js"

const SCENARIO = "search"

const seed = (ctx: Context, db: string) => {
  const facts = ctx.sizes.searchFacts
  resetRandom()
  const program = Effect.gen(function*() {
    const seeded = yield* seedDataset("bench", facts, Math.max(50, Math.floor(facts / 5)), ctx.dims, (done) => {
      if (done % 20_000 === 0) ctx.log(`search: seeded ${done.toLocaleString("en-US")} facts`)
    })
    yield* seedDataset("other", 1000, 200, ctx.dims)
    return seeded
  }).pipe(Effect.provide(SqliteVecStoreLive(ctx.dims).pipe(Layer.provideMerge(SqliteLive(db)))))
  return Effect.runPromise(program as Effect.Effect<{ names: ReadonlyArray<string> }, unknown, never>)
}

const time = async (
  server: Server,
  qs: ReadonlyArray<string>,
  hops: number,
  warmUp: number
): Promise<Stats & { facts: number }> => {
  const ms: Array<number> = []
  let facts = 0
  for (const [i, query] of qs.entries()) {
    const res = await request<{ facts: Array<unknown> }>("POST", `${server.url}/v1/gb/search`, {
      user_id: "bench",
      dataset: "main",
      query,
      limit: 10,
      hops
    })
    if (i >= warmUp) {
      ms.push(res.ms)
      facts += res.body.facts.length
    }
  }
  return { ...stats(ms), facts: facts / ms.length }
}

export const search = async (ctx: Context) => {
  const db = join(ctx.dir, "search.db")
  const t0 = performance.now()
  const seeded = await seed(ctx, db)
  const seedingSeconds = (performance.now() - t0) / 1000
  ctx.log(`search: seeded in ${seedingSeconds.toFixed(0)} s`)
  const { warmUp } = ctx.sizes
  const qs = questions(seeded.names, ctx.sizes.searchQueries + warmUp)
  const vqs = qs.slice(0, ctx.sizes.vectorQueries + warmUp)
  type Figure = { fulltext: Stats; vectors: Stats; graph: Stats }
  const figures: Partial<Record<ConfigName, Figure>> = {}
  for (const config of ["seed", "defaults"] as const) {
    const fulltext = await withServer(ctx, {
      scenario: "search-fulltext",
      db,
      config,
      embeddings: false,
      shared: false
    }, (server) => time(server, qs, 0, warmUp))
    const [vectors, graph] = await withServer(ctx, {
      scenario: "search-vectors",
      db,
      config,
      embeddings: true,
      shared: false
    }, async (server) => [
      await time(server, vqs, 0, warmUp),
      await time(server, vqs, 1, warmUp)
    ])
    figures[config] = { fulltext, vectors: vectors!, graph: graph! }
    ctx.log(`search: ${config} done`)
  }
  const s = figures.seed!
  const d = figures.defaults!
  const n = ctx.sizes.searchFacts.toLocaleString("en-US")
  const rows = [
    ["full text only (hops 0)", (f: Figure) => f.fulltext, true],
    [`full text + vectors (hops 0, ${ctx.dims} dimensions)`, (f: Figure) => f.vectors, true],
    ["full text + vectors + graph (hops 1, the default)", (f: Figure) => f.graph, false]
  ] as const
  for (const [name, pick, barred] of rows) {
    ctx.report.row({
      scenario: SCENARIO,
      measure: `p50 ms at ${n} facts, ${name}`,
      seed: fmt(pick(s).p50),
      defaults: fmt(pick(d).p50),
      ratio: ratio(pick(d).p50, pick(s).p50)
    })
    ctx.report.row({
      scenario: SCENARIO,
      measure: `p95 ms at ${n} facts, ${name}`,
      seed: fmt(pick(s).p95),
      defaults: fmt(pick(d).p95),
      ratio: ratio(pick(d).p95, pick(s).p95),
      ...(barred ? { bar: ctx.report.bar(SCENARIO, `p95, ${name}`, pick(d).p95, "<", 50, " ms") } : {})
    })
  }
  ctx.report.figures[SCENARIO] = {
    facts: ctx.sizes.searchFacts,
    dims: ctx.dims,
    queries: ctx.sizes.searchQueries,
    vector_queries: ctx.sizes.vectorQueries,
    seeding_s: seedingSeconds,
    ...figures
  }
}
