/**
 * The read side's figures: `npx tsx scripts/bench-search.ts [--facts 100000] [--queries 200]
 * [--dims 256] [--pg URL|auto] [--keep]`.
 *
 * Seeds one dataset of --facts facts among facts/5 entities (names from a small vocabulary so
 * that words repeat as in real data; about 10% of the facts closed; every fact linked to one of
 * facts/10 artifacts and one of 100 sessions) through the repositories, and hash-embedding
 * vectors of every entity and fact into sqlite-vec (the default store; a file of its own next to
 * a PostgreSQL database). A second, small dataset of another user shares the tables.
 *
 * Then, in process (no HTTP), the latency of `runSearch` (limit 10) over --queries random
 * questions after a warm-up: full text + graph (no vectors), and with vectors (the question
 * embedded, four indexes queried); and the export throughput of the whole dataset (JSON and
 * GraphML, include_expired) into a byte counter. Prints tables for BENCHMARKS.md.
 */
import { Effect, Layer, Redacted, Stream } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgLive, SqliteLive, type Storage, type StorageError } from "../layers/sql/index.js"
import { hashEmbedding, HashEmbeddings } from "../layers/testing/HashEmbeddings.js"
import { SqliteVecFileStoreLive, SqliteVecStoreLive } from "../layers/vectors/SqliteVecStore.js"
import { edgeVectorId, entityText, entityVectorId, indexName } from "../src/pipeline/vectors.js"
import { type ReadDeps, readDeps } from "../src/query/deps.js"
import { runExportGraph } from "../src/query/export.js"
import { runSearch } from "../src/query/search.js"
import { Database } from "../src/services/Database.js"
import { DatasetsRepo } from "../src/services/DatasetsRepo.js"
import { GraphRepo } from "../src/services/GraphRepo.js"
import { VectorStore } from "../src/services/VectorStore.js"
import { startPgCluster } from "../test/support/postgres.js"

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]!
}
const FACTS = Number(arg("facts", "100000"))
const ENTITIES = Math.max(50, Math.floor(FACTS / 5))
const QUERIES = Number(arg("queries", "200"))
const DIMS = Number(arg("dims", "256"))
const PG_URL = arg("pg", "")
/** keep the SQLite file (its path is printed) for looking at query plans */
const KEEP = process.argv.includes("--keep")
const BATCH = 500

// a deterministic generator, so runs are comparable
let seed = 42
const random = () => {
  seed = (seed * 1664525 + 1013904223) % 2 ** 32
  return seed / 2 ** 32
}
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!

const FIRST = ["Alice", "Bob", "Carol", "Dmitri", "Emma", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemal", "Lena", "Maya", "Nils", "Olga", "Pedro", "Quinn", "Rosa", "Sami", "Tara"]
const LAST = ["Smith", "Novak", "Okafor", "Tanaka", "Garcia", "Müller", "Rossi", "Haddad", "Larsen", "Kowalski", "Silva", "Chen", "Dubois", "Ivanova", "Moreau"]
const ORG = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Cyberdyne", "Tyrell"]
const ORG_KIND = ["Labs", "Bank", "Foods", "Motors", "Studios", "Energy", "Robotics", "Press"]
const CITY = ["Berlin", "Paris", "Lagos", "Tokyo", "Lima", "Oslo", "Cairo", "Quito", "Seoul", "Perth", "Porto", "Riga"]
const RELATIONS: ReadonlyArray<readonly [string, string]> = [
  ["lives in", "lives in"],
  ["works at", "works at"],
  ["knows", "knows"],
  ["founded", "founded"],
  ["visited", "visited"],
  ["invested in", "invested in"],
  ["moved to", "moved to"],
  ["studied at", "studied at"]
]
const TOPICS = ["rockets", "coffee", "batteries", "films", "chess", "solar panels", "bread", "satellites", "jazz", "robots"]

const iso = (ms: number) => new Date(ms).toISOString()
const START = Date.UTC(2015, 0, 1)
const SPAN = Date.UTC(2025, 0, 1) - START

interface Seeded {
  readonly datasetId: number
  readonly names: ReadonlyArray<string>
}

const entityName = (i: number): { name: string; type: string; description: string } => {
  switch (i % 4) {
    case 0:
    case 1:
      return { name: `${pick(FIRST)} ${pick(LAST)} ${i}`, type: "person", description: `a person who likes ${pick(TOPICS)}` }
    case 2:
      return { name: `${pick(ORG)} ${pick(ORG_KIND)} ${i}`, type: "organization", description: `a company making ${pick(TOPICS)}` }
    default:
      return { name: `${pick(CITY)} ${i}`, type: "place", description: `a district known for ${pick(TOPICS)}` }
  }
}

const seedDataset = (user: string, facts: number, entities: number) =>
  Effect.gen(function*() {
    const database = yield* Database
    const datasets = yield* DatasetsRepo
    const graph = yield* GraphRepo
    const vectors = yield* VectorStore
    const dataset = yield* datasets.getOrCreate(user, "main", iso(START))
    const artifactIds: Array<number> = []
    for (let i = 0; i < Math.max(1, Math.floor(facts / 10)); i++) {
      const row = yield* graph.insertArtifact({
        dataset_id: dataset.id,
        kind: "knowledge",
        text: `Text ${i} about ${pick(TOPICS)}.`,
        parent_id: null,
        session_id: `session-${i % 100}`,
        valid_at: iso(START + (i / facts) * 10 * SPAN),
        created_at: iso(START + (i / facts) * 10 * SPAN),
        inference_id: null,
        query: null,
        metadata: null
      })
      artifactIds.push(row.id)
    }
    const specs = Array.from({ length: entities }, (_, i) => entityName(i))
    const ids: Array<number> = []
    for (let from = 0; from < specs.length; from += BATCH) {
      const chunk = specs.slice(from, from + BATCH)
      const rows = yield* database.withTransaction(graph.upsertEntities(
        dataset.id,
        chunk.map((e) => ({ ...e, name_key: e.name.toLowerCase(), model_id: null, created_at: iso(START) }))
      ))
      ids.push(...rows.map((r) => r.id))
      yield* vectors.upsert(
        indexName(dataset.id, "entities"),
        rows.map((r) => ({
          id: entityVectorId(r.id),
          values: hashEmbedding(entityText(r), DIMS),
          metadata: { dataset_id: dataset.id, kind: "entity", entity_id: r.id }
        }))
      )
    }
    for (let from = 0; from < facts; from += BATCH) {
      const n = Math.min(BATCH, facts - from)
      const edges = Array.from({ length: n }, (_, k) => {
        const i = from + k
        const s = Math.floor(random() * ids.length)
        let t = Math.floor(random() * ids.length)
        if (t === s) t = (t + 1) % ids.length
        const [relation, verb] = pick(RELATIONS)
        const valid = START + random() * SPAN
        const closed = random() < 0.1
        const created = START + (i / facts) * SPAN
        return {
          dataset_id: dataset.id,
          source_id: ids[s]!,
          target_id: ids[t]!,
          relation,
          description: `${specs[s]!.name} ${verb} ${specs[t]!.name}${random() < 0.3 ? ` for ${pick(TOPICS)}` : ""}`,
          valid_at: iso(valid),
          invalid_at: closed ? iso(valid + random() * (START + SPAN - valid)) : null,
          created_at: iso(created),
          expired_at: closed ? iso(created) : null,
          artifact_id: artifactIds[i % artifactIds.length]!,
          model_id: null
        }
      })
      const rows = yield* database.withTransaction(Effect.gen(function*() {
        const inserted = yield* graph.insertEdges(edges)
        for (const row of inserted) {
          yield* graph.linkEdgeArtifacts(row.artifact_id!, [row.id])
        }
        const bySession = new Map<string, Array<number>>()
        for (const row of inserted) {
          const session = `session-${row.id % 100}`
          bySession.set(session, [...(bySession.get(session) ?? []), row.id])
        }
        for (const [session, edgeIds] of bySession) yield* graph.linkEdgeSessions(session, edgeIds)
        return inserted
      }))
      yield* vectors.upsert(
        indexName(dataset.id, "edges"),
        rows.map((r) => ({
          id: edgeVectorId(r.id),
          values: hashEmbedding(r.description, DIMS),
          metadata: { dataset_id: dataset.id, kind: "edge", edge_id: r.id }
        }))
      )
      if ((from / BATCH) % 40 === 0) process.stderr.write(`\rseeded ${from + n} facts of ${facts}`)
    }
    process.stderr.write("\n")
    return { datasetId: dataset.id, names: specs.map((s) => s.name) } satisfies Seeded
  })

const questions = (names: ReadonlyArray<string>): Array<string> =>
  Array.from({ length: QUERIES + 20 }, (_, i) => {
    const a = pick(names).replace(/ \d+$/, "")
    switch (i % 4) {
      case 0:
        return `Where does ${a} live?`
      case 1:
        return `Who works at ${pick(ORG)} ${pick(ORG_KIND)}?`
      case 2:
        return `${a} and ${pick(TOPICS)}`
      default:
        return `What did ${a} found in ${pick(CITY)}?`
    }
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const timeSearches = (deps: ReadDeps, qs: ReadonlyArray<string>, hops: number) =>
  Effect.gen(function*() {
    const times: Array<number> = []
    let facts = 0
    for (const [i, query] of qs.entries()) {
      const start = performance.now()
      const out = yield* runSearch(deps, {
        user_id: "bench",
        dataset: "main",
        query,
        include_expired: false,
        limit: 10,
        hops
      })
      if (i >= 20) {
        times.push(performance.now() - start)
        facts += out.facts.length
      }
    }
    times.sort((a, b) => a - b)
    return {
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      mean: times.reduce((a, b) => a + b, 0) / times.length,
      facts: facts / times.length
    }
  })

const timeExport = (deps: ReadDeps, format: "json" | "graphml") =>
  Effect.gen(function*() {
    const rssBefore = process.memoryUsage().rss
    let peak = rssBefore
    const start = performance.now()
    const exported = yield* runExportGraph(deps, { user_id: "bench", dataset: "main", include_expired: true, format })
    let bytes = 0
    yield* Stream.runForEach(exported.body, (piece) =>
      Effect.sync(() => {
        bytes += Buffer.byteLength(piece, "utf8")
        peak = Math.max(peak, process.memoryUsage().rss)
      }))
    const seconds = (performance.now() - start) / 1000
    return { seconds, bytes, peakDelta: (peak - rssBefore) / 2 ** 20 }
  })

const f = (x: number) => x.toFixed(x < 10 ? 1 : 0)

const main = (storage: Layer.Layer<Storage, StorageError>, vectorStore: Layer.Layer<VectorStore, unknown, any>) =>
  Effect.gen(function*() {
    const seedStart = performance.now()
    const seeded = yield* seedDataset("bench", FACTS, ENTITIES)
    yield* seedDataset("other", 1000, 200)
    console.log(`seeded ${FACTS.toLocaleString("en-US")} facts, ${ENTITIES.toLocaleString("en-US")} entities in ${f((performance.now() - seedStart) / 1000)} s`)
    const deps = yield* readDeps
    const qs = questions(seeded.names)
    const plain = yield* timeSearches({ ...deps, embeddings: null }, qs, 1)
    const textOnly = yield* timeSearches({ ...deps, embeddings: null }, qs, 0)
    const withVectors = yield* timeSearches(deps, qs, 1)
    console.log(`\nsearch, limit 10, ${QUERIES} questions after 20 warm-up, ${DIMS}-dimension hash embeddings in sqlite-vec`)
    console.log("| sources | p50 ms | p95 ms | mean ms | facts returned (mean) |")
    console.log("| --- | --- | --- | --- | --- |")
    for (const [name, r] of [
      ["full text only (hops 0)", textOnly],
      ["full text + graph (hops 1), no vectors", plain],
      ["full text + vectors + graph (hops 1)", withVectors]
    ] as const) {
      console.log(`| ${name} | ${f(r.p50)} | ${f(r.p95)} | ${f(r.mean)} | ${r.facts.toFixed(1)} |`)
    }
    console.log(`\nexport of the whole dataset (include_expired): ${FACTS.toLocaleString("en-US")} facts, ${ENTITIES.toLocaleString("en-US")} entities, ${Math.floor(FACTS / 10).toLocaleString("en-US")} artifacts`)
    console.log("| format | seconds | facts/s | MB | MB/s | RSS growth MiB |")
    console.log("| --- | --- | --- | --- | --- | --- |")
    for (const format of ["json", "graphml"] as const) {
      const r = yield* timeExport(deps, format)
      const mb = r.bytes / 1e6
      console.log(`| ${format} | ${r.seconds.toFixed(1)} | ${Math.round(FACTS / r.seconds).toLocaleString("en-US")} | ${f(mb)} | ${f(mb / r.seconds)} | ${Math.round(r.peakDelta)} |`)
    }
  }).pipe(
    Effect.provide(Layer.mergeAll(vectorStore, HashEmbeddings.layer({ dimensions: DIMS })).pipe(Layer.provideMerge(storage)))
  )

const dir = mkdtempSync(join(tmpdir(), "gligabao-bench-search-"))
// `--pg auto`: a throwaway cluster, as the tests start one
const cluster = PG_URL === "auto" ? await startPgCluster() : undefined
const pgUrl = cluster?.adminUrl ?? PG_URL
const program = pgUrl === ""
  ? main(SqliteLive(join(dir, "bench.db")), SqliteVecStoreLive(DIMS))
  : main(PgLive(Redacted.make(pgUrl)), SqliteVecFileStoreLive(join(dir, "vectors.db"), DIMS))

console.log(`${pgUrl === "" ? "SQLite (WAL file)" : "PostgreSQL"}, Node ${process.version}`)
await Effect.runPromise(program as Effect.Effect<void, unknown, never>)
  .catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => {
    cluster?.stop()
    if (KEEP) console.log(`kept ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  })
