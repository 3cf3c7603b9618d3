/** What every scenario gets: sizes, the fakes, the report, and a server per configuration. */
import { join } from "node:path"
import type { Fakes } from "./fakes.js"
import type { Report } from "./report.js"
import { type ConfigName, type Server, startServer } from "./server.js"

export interface Sizes {
  /** sequential remembers per overhead measurement */
  readonly runs: number
  /** requests before measuring (JIT, prepared statements, caches) */
  readonly warmUp: number
  /** stored edges of the overhead scenario's big dataset */
  readonly edges: number
  /** model latency of the latency, throughput and document scenarios, ms */
  readonly latencyMs: number
  /** remembers per measurement of the latency floor */
  readonly floorRuns: number
  /** datasets remembered into concurrently, and texts per dataset */
  readonly datasets: number
  readonly textsPerDataset: number
  readonly docChunks: number
  readonly searchFacts: number
  readonly searchQueries: number
  /** searches with vectors cost more: fewer of them */
  readonly vectorQueries: number
  /** the memory scenario's text, bytes, and its model latency */
  readonly memoryBytes: number
  readonly memoryLatencyMs: number
  /** the cpu scenario: sequential remembers and searches, and remembers per client of 8 at once */
  readonly cpuRemembers: number
  readonly cpuSearches: number
  readonly cpuClientRemembers: number
}

export const FULL: Sizes = {
  runs: 200,
  warmUp: 20,
  edges: 1_000_000,
  latencyMs: 500,
  floorRuns: 10,
  datasets: 16,
  textsPerDataset: 3,
  docChunks: 20,
  searchFacts: 100_000,
  searchQueries: 200,
  vectorQueries: 100,
  memoryBytes: 1024 * 1024,
  memoryLatencyMs: 10,
  cpuRemembers: 200,
  cpuSearches: 200,
  cpuClientRemembers: 25
}

export const QUICK: Sizes = {
  runs: 25,
  warmUp: 8,
  edges: 100_000,
  latencyMs: 100,
  floorRuns: 4,
  datasets: 16,
  textsPerDataset: 2,
  docChunks: 8,
  searchFacts: 10_000,
  searchQueries: 25,
  vectorQueries: 15,
  memoryBytes: 128 * 1024,
  memoryLatencyMs: 0,
  // a clock tick is 10 ms: 96 operations of the plain implementation's 2 to 5 ms take 20 to 50
  cpuRemembers: 96,
  cpuSearches: 96,
  cpuClientRemembers: 8
}

export interface Context {
  readonly quick: boolean
  readonly sizes: Sizes
  /** this run's temporary directory (databases) */
  readonly dir: string
  readonly configFile: string
  readonly fakes: Fakes
  readonly report: Report
  /** embedding dimensions wherever embeddings are on */
  readonly dims: number
  /** where CPU profiles go, when --profile */
  readonly profileDir: string | undefined
  /** the server's CLI (--entry), default bin/gligabao.js */
  readonly entry: string | undefined
  /** where SQL traces go, when --trace-sql */
  readonly sqlTraceDir: string | undefined
  /** --pg: the scenarios that support it (cpu) run on a throwaway PostgreSQL cluster */
  readonly pg: boolean
  readonly log: (message: string) => void
  /**
   * --quick: one server per configuration shared by the scenarios that need no seeded file
   * (each uses datasets of its own), so that the quick run is not mostly server startups
   */
  readonly pool: Map<string, Server> | undefined
}

/**
 * Runs `f` against a fresh server process on `db`, stopped afterwards whatever happens; or, in
 * --quick mode and unless `shared` is false, against the configuration's shared server (its
 * file is `server.db`).
 */
export const withServer = async <A>(
  ctx: Context,
  options: {
    readonly scenario: string
    readonly db: string
    readonly config: ConfigName
    readonly embeddings: boolean
    readonly shared?: boolean
  },
  f: (server: Server) => Promise<A>
): Promise<A> => {
  const start = (name: string, db: string) =>
    startServer({
      db,
      fakes: ctx.fakes,
      config: options.config,
      configFile: ctx.configFile,
      embeddingDimensions: options.embeddings ? ctx.dims : undefined,
      profileDir: ctx.profileDir === undefined ? undefined : join(ctx.profileDir, name),
      entry: ctx.entry,
      sqlTraceFile: ctx.sqlTraceDir === undefined ? undefined : join(ctx.sqlTraceDir, `${name}.json`)
    })
  const config = options.config.replace(/ /g, "-")
  if (ctx.pool !== undefined && options.shared !== false) {
    const key = `shared-${config}${options.embeddings ? "" : "-no-embeddings"}`
    let server = ctx.pool.get(key)
    if (server === undefined) {
      server = await start(key, join(ctx.dir, `${key}.db`))
      ctx.pool.set(key, server)
    }
    return f(server)
  }
  const server = await start(`${options.scenario}-${config}`, options.db)
  try {
    return await f(server)
  } finally {
    await server.stop()
  }
}
