/**
 * CPU per operation (issue 39): the server process's own CPU time per remember and per hybrid
 * search, beside a plain implementation of the same durable work (scripts/benchmarks/plain/),
 * on the same fake models (0 ms) and SQLite, in one run. Both servers run at once, each a child
 * process of its own with the probe preload (cpuProbe.cjs); the phases alternate between them.
 *
 * Texts: three facts among people (`A knows B.`), round robin into 8 datasets that share one
 * cast of 16 names, every fact new to its dataset: so every remember after a dataset's first
 * finds stored facts about its people and makes both model calls (extract_graph and
 * resolve_edges) and one embeddings request. Phases, after a warm-up: sequential remembers;
 * sequential hybrid searches (`Who does X know?`, full text and vectors, the graph around the
 * best entities); 8 clients at once, one a dataset, each remembering one text after another.
 *
 * Measured: CPU ms per operation = (utime + stime) of /proc/<pid>/stat over the phase ÷
 * operations (every thread of the process; clock ticks from `getconf CLK_TCK`); statements per
 * operation and bytes allocated on the main thread's V8 heap (the probe); remembers per second;
 * the peak resident set (VmHWM). Then both graphs are compared dataset by dataset.
 *
 * `--pg`: the same on PostgreSQL (issue 39, item 4): a throwaway cluster, a database for each
 * side (gligabao through DATABASE_URL, the plain one is plain/pgServer.ts), and the CPU of the
 * cluster's processes over each phase beside the server's (pgCluster.ts). The phases alternate,
 * so the cluster works for one side at a time; backends are attributed by their database.
 */
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import type { Context } from "../context.js"
import { openReadonly } from "../db.js"
import type { ModelCall } from "../fakes.js"
import { clusterDelta, type ClusterReading, type CpuCluster, startCpuCluster, withPg } from "../pgCluster.js"
import { startPlain } from "../plain/start.js"
import { clockTicks, type Delta, delta, read } from "../probe.js"
import { count, fmt, ratio, stats } from "../report.js"
import { hwmMiB, MB, request, ROOT, startServer } from "../server.js"
import { people } from "../texts.js"

const SCENARIO = "cpu"
/** the report's scenario name: the PostgreSQL run's bars and figures apart from SQLite's */
const scenarioOf = (ctx: Context) => (ctx.pg ? "cpu-pg" : SCENARIO)
const DATASETS = 8
const CAST = people(16, 39)
/** remembers per second with 8 clients at 0 ms models before issue 39's work (its own run) */
const TODAY_REMEMBERS_PER_SECOND = 33.5

/** The j-th fact of a dataset: no two j < 16 × 15 give the same pair. */
const fact = (j: number) => {
  const a = j % CAST.length
  return `${CAST[a]} knows ${CAST[(a + 1 + Math.floor(j / CAST.length)) % CAST.length]}.`
}

interface Target {
  readonly name: "gligabao" | "plain"
  readonly pid: number
  /** a SQLite file, or with --pg its database's URL */
  readonly db: string
  /** with --pg: the cluster, and this side's database in it */
  readonly pg?: { readonly cluster: CpuCluster; readonly database: string } | undefined
  readonly probeFile: string
  readonly remember: (dataset: number, text: string) => Promise<number>
  readonly search: (dataset: number, query: string) => Promise<{ ms: number; facts: number }>
  /** texts remembered so far, per dataset */
  readonly written: Array<number>
  readonly stop: () => Promise<void>
}

const rememberNext = (t: Target, dataset: number) => {
  const i = t.written[dataset]!++
  return t.remember(dataset, [0, 1, 2].map((k) => fact(3 * i + k)).join(" "))
}

interface Figure {
  readonly seq: Phase
  readonly search: Phase
  /** the 8 clients at once */
  readonly tp: Phase
  /** facts in each search's answer */
  readonly found: ReadonlyArray<number>
  readonly peakMB: number
}

interface Phase {
  readonly ops: number
  readonly delta: Delta
  readonly wall: ReadonlyArray<number>
  readonly calls: ReadonlyArray<ModelCall>
  /** CPU ms of this process (the fake models, the clients) meanwhile: what both servers share */
  readonly benchCpuMs: number
  /** with --pg: CPU ms of this side's backends, and of the whole cluster, over the phase */
  readonly pgCpu?: { readonly backends: number; readonly cluster: number } | undefined
}

const measure = async (ctx: Context, t: Target, ops: number, f: () => Promise<ReadonlyArray<number>>) => {
  const from = await read(t.pid, t.probeFile)
  const pg0: ClusterReading | undefined = t.pg?.cluster.read()
  const t0 = performance.now()
  const bench0 = process.cpuUsage()
  const wall = await f()
  const bench = process.cpuUsage(bench0)
  const calls = ctx.fakes.between(t0, performance.now())
  const pg = t.pg === undefined ? undefined : clusterDelta(pg0!, t.pg.cluster.read())
  const to = await read(t.pid, t.probeFile)
  return {
    ops,
    delta: delta(from, to),
    wall,
    calls,
    benchCpuMs: (bench.user + bench.system) / 1000,
    pgCpu: pg === undefined ? undefined : { backends: pg.byDatabase[t.pg!.database] ?? 0, cluster: pg.total }
  } satisfies Phase
}

const sequential = (ctx: Context, t: Target, n: number) =>
  measure(ctx, t, n, async () => {
    const ms: Array<number> = []
    for (let i = 0; i < n; i++) ms.push(await rememberNext(t, i % DATASETS))
    return ms
  })

const queryOf = (i: number) => `Who does ${CAST[(i * 5) % CAST.length]} know?`

const searches = (ctx: Context, t: Target, n: number, found: Array<number>) =>
  measure(ctx, t, n, async () => {
    const ms: Array<number> = []
    for (let i = 0; i < n; i++) {
      const answer = await t.search(i % DATASETS, queryOf(i))
      ms.push(answer.ms)
      found.push(answer.facts)
    }
    return ms
  })

const concurrent = (ctx: Context, t: Target, perClient: number) =>
  measure(ctx, t, DATASETS * perClient, async () => {
    await Promise.all(Array.from({ length: DATASETS }, async (_, d) => {
      for (let i = 0; i < perClient; i++) await rememberNext(t, d)
    }))
    return []
  })

const TOP_SHAPES = 30

/**
 * Statements grouped by shape: runs of placeholders and repeated rows of a VALUES list shortened,
 * the number of a dataset's full-text table replaced by N, so one statement is one line.
 */
const byShape = (bySql: Delta["bySql"]) => {
  const shapes = new Map<string, number>()
  for (const { calls, sql } of bySql) {
    const shape = sql.replace(/\s+/g, " ")
      .replace(/\?(?:\s*,\s*\?)+/g, "?, …")
      .replace(/\$\d+(?:\s*,\s*\$\d+)+/g, () => "$n, …")
      .replace(/(\((?:[^()]|\([^()]*\))*\))(?:\s*,\s*\1)+/g, "$1, …")
      .replace(/\b(gb_fts_[a-z]+)_\d+\b/g, "$1_N")
    shapes.set(shape, (shapes.get(shape) ?? 0) + calls)
  }
  return [...shapes].map(([sql, calls]) => ({ sql, calls })).sort((a, b) => b.calls - a.calls)
}

/** How bin/gligabao.js runs the server: its compiled build when current, else the sources through tsx. */
const serverForm = (ctx: Context): string => {
  if (ctx.entry !== undefined) return `node ${ctx.entry}`
  const compiled = join(ROOT, "build", "dist", "src", "cli", "main.js")
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((m, e) => {
      const path = join(dir, e.name)
      return Math.max(m, e.isDirectory() ? newest(path) : e.name.endsWith(".ts") ? statSync(path).mtimeMs : 0)
    }, 0)
  const fresh = existsSync(compiled) &&
    statSync(compiled).mtimeMs >= Math.max(newest(join(ROOT, "src")), newest(join(ROOT, "layers")))
  return fresh ? "the compiled build" : "the sources through tsx (the build is older than them)"
}

/** Each dataset's entities (name, type) and live facts (source, relation, target), sorted. */
const graphs = async (t: Target): Promise<Array<string>> => {
  const [entities, facts, datasets] = t.name === "gligabao"
    ? ["gb_entities", "gb_edges", "gb_datasets"]
    : ["entities", "facts", "datasets"]
  const queries = [
    `SELECT e.name, e.type FROM ${entities} e JOIN ${datasets} d ON d.id = e.dataset_id
     WHERE d.name = ? ORDER BY 1, 2`,
    `SELECT s.name AS source, f.relation, t.name AS target FROM ${facts} f
     JOIN ${entities} s ON s.id = f.source_id JOIN ${entities} t ON t.id = f.target_id
     JOIN ${datasets} d ON d.id = f.dataset_id WHERE d.name = ? AND f.expired_at IS NULL ORDER BY 1, 2, 3`
  ] as const
  const each = async (rows: (sql: string, dataset: string) => Promise<Array<unknown>>) => {
    const out: Array<string> = []
    for (let d = 0; d < DATASETS; d++) {
      const [e, f] = [await rows(queries[0], `cpu-${d}`), await rows(queries[1], `cpu-${d}`)]
      out.push(JSON.stringify({ entities: e, facts: f }))
    }
    return out
  }
  // (the cluster sorts text bytewise, as SQLite does: it was made with --locale=C)
  if (t.pg !== undefined) {
    return withPg(t.db, (client) => each(async (sql, d) => (await client.query(sql.replace("?", "$1"), [d])).rows))
  }
  const db = openReadonly(t.db)
  try {
    return await each(async (sql, d) => db.prepare(sql).all(d))
  } finally {
    db.close()
  }
}

const start = async (ctx: Context, cluster: CpuCluster | undefined): Promise<[Target, Target]> => {
  const body = (dataset: number, field: string, value: string) => ({
    user_id: "bench",
    dataset: `cpu-${dataset}`,
    [field]: value
  })
  const gDb = cluster?.url("cpu_gligabao") ?? join(ctx.dir, "cpu-gligabao.db")
  const gProbe = join(ctx.dir, "cpu-gligabao.probe.json")
  const g = await startServer({
    db: gDb,
    fakes: ctx.fakes,
    config: "defaults",
    configFile: ctx.configFile,
    embeddingDimensions: ctx.dims,
    profileDir: ctx.profileDir === undefined ? undefined : join(ctx.profileDir, "cpu-gligabao"),
    entry: ctx.entry,
    sqlTraceFile: ctx.sqlTraceDir === undefined ? undefined : join(ctx.sqlTraceDir, "cpu-gligabao.json"),
    probeFile: gProbe
  })
  const pDb = cluster?.url("cpu_plain") ?? join(ctx.dir, "cpu-plain.db")
  const pProbe = join(ctx.dir, "cpu-plain.probe.json")
  const p = await startPlain({
    db: pDb,
    fakes: ctx.fakes,
    dims: ctx.dims,
    promptsFile: join(ctx.dir, "cpu-plain.prompts.json"),
    probeFile: pProbe
  })
  const target = (
    name: Target["name"],
    server: { pid: number; stop: () => Promise<void> },
    db: string,
    probeFile: string,
    rememberUrl: string,
    searchUrl: string
  ): Target => ({
    name,
    pid: server.pid,
    db,
    pg: cluster === undefined ? undefined : { cluster, database: name === "gligabao" ? "cpu_gligabao" : "cpu_plain" },
    probeFile,
    remember: async (d, text) => (await request("POST", rememberUrl, body(d, "text", text))).ms,
    search: async (d, query) => {
      const res = await request<{ facts: Array<unknown> }>("POST", searchUrl, { ...body(d, "query", query), limit: 10 })
      return { ms: res.ms, facts: res.body.facts.length }
    },
    written: Array.from({ length: DATASETS }, () => 0),
    stop: server.stop
  })
  return [
    target("gligabao", g, gDb, gProbe, `${g.url}/v1/gb/remember`, `${g.url}/v1/gb/search`),
    target("plain", p, pDb, pProbe, `${p.url}/remember`, `${p.url}/search`)
  ]
}

export const cpu = async (ctx: Context) => {
  ctx.fakes.setLatency(0)
  const cluster = ctx.pg ? await startCpuCluster(["cpu_gligabao", "cpu_plain"]) : undefined
  try {
    await run(ctx, cluster)
  } finally {
    cluster?.stop()
  }
}

const run = async (ctx: Context, cluster: CpuCluster | undefined) => {
  const { cpuRemembers, cpuSearches, cpuClientRemembers, warmUp } = ctx.sizes
  const targets = await start(ctx, cluster)
  const figures: Record<string, Figure> = {}
  try {
    // JIT, prepared statements, caches: two texts a dataset (the second makes both model calls)
    for (const t of targets) {
      for (let i = 0; i < 2 * DATASETS + warmUp; i++) await rememberNext(t, i % DATASETS)
      for (let i = 0; i < warmUp; i++) await t.search(i % DATASETS, queryOf(i))
    }
    ctx.log(`cpu: warmed up`)
    const seq = []
    for (const t of targets) seq.push(await sequential(ctx, t, cpuRemembers))
    ctx.log(`cpu: sequential remembers done`)
    const search = []
    const found: [Array<number>, Array<number>] = [[], []]
    for (const [k, t] of targets.entries()) search.push(await searches(ctx, t, cpuSearches, found[k]!))
    ctx.log(`cpu: searches done`)
    const tp = []
    for (const t of targets) tp.push(await concurrent(ctx, t, cpuClientRemembers))
    for (const [k, t] of targets.entries()) {
      figures[t.name] = { seq: seq[k]!, search: search[k]!, tp: tp[k]!, found: found[k]!, peakMB: hwmMiB(t.pid) * MB }
    }
  } finally {
    for (const t of targets) await t.stop()
  }
  const [gGraphs, pGraphs] = await Promise.all(targets.map(graphs))
  const same = gGraphs!.filter((g, d) => g === pGraphs![d]).length
  ctx.report.check(
    scenarioOf(ctx),
    "gligabao and the plain implementation store the same graphs",
    same === DATASETS,
    `${same} of ${DATASETS} datasets the same`
  )
  report(ctx, figures.gligabao!, figures.plain!)
}

const report = (ctx: Context, g: Figure, p: Figure) => {
  const SCENARIO = scenarioOf(ctx)
  const per = (phase: Phase, x: number) => x / phase.ops
  /** with --pg: this side's backends' CPU ms per operation of the phase */
  const backends = (phase: Phase) => per(phase, phase.pgCpu?.backends ?? NaN)
  const cluster = (phase: Phase) => per(phase, phase.pgCpu?.cluster ?? NaN)
  // on PostgreSQL an operation's CPU is the server's and its backends' (the bars judge the sum)
  const both = (phase: Phase) => per(phase, phase.delta.cpuMs) + (ctx.pg ? backends(phase) : 0)
  const cpuSeq = (f: Figure) => per(f.seq, f.seq.delta.cpuMs)
  const cpuSearch = (f: Figure) => per(f.search, f.search.delta.cpuMs)
  const cpuTp = (f: Figure) => per(f.tp, f.tp.delta.cpuMs)
  const [judgedSeq, judgedSearch] = [(f: Figure) => both(f.seq), (f: Figure) => both(f.search)]
  const rate = (f: Figure) => f.tp.ops / (f.tp.delta.wallMs / 1000)
  const stmts = (f: Figure) => per(f.seq, f.seq.delta.statements)
  const calls = (f: Figure, kind: ModelCall["kind"]) => f.seq.calls.filter((c) => c.kind === kind).length / f.seq.ops
  const mb = (bytes: number) => bytes / 1e6
  const side = (measure: string, pick: (f: Figure) => number, bar?: ReturnType<typeof ctx.report.bar>) =>
    ctx.report.row({
      scenario: SCENARIO,
      measure: `${measure} (plain ${fmt(pick(p))})`,
      defaults: fmt(pick(g)),
      ratio: `gligabao ÷ plain ${ratio(pick(g), pick(p))}`,
      ...(bar === undefined ? {} : { bar })
    })
  const plus = ctx.pg ? " (server + its PostgreSQL backends)" : ""
  side(
    `CPU ms per remember, sequential${plus}`,
    judgedSeq,
    ctx.report.bar(SCENARIO, "CPU per remember, gligabao ÷ plain", judgedSeq(g) / judgedSeq(p), "<=", 3, "x")
  )
  side(
    `CPU ms per hybrid search${plus}`,
    judgedSearch,
    ctx.report.bar(
      SCENARIO,
      "CPU per hybrid search, gligabao ÷ plain",
      judgedSearch(g) / judgedSearch(p),
      "<=",
      1.5,
      "x"
    )
  )
  // (the throughput bar's "before" figure was measured on SQLite)
  side(
    `remembers/s, ${DATASETS} clients, 0 ms models`,
    rate,
    ctx.pg ? undefined : ctx.report.bar(
      SCENARIO,
      `remembers/s, ${DATASETS} clients, 0 ms models (3 × ${TODAY_REMEMBERS_PER_SECOND} before issue 39)`,
      rate(g),
      ">=",
      3 * TODAY_REMEMBERS_PER_SECOND,
      "/s"
    )
  )
  const statements = ctx.pg
    ? "SQL statements per remember (queries sent by node-postgres)"
    : "SQL statements per remember"
  side(
    statements,
    stmts,
    ctx.report.bar(SCENARIO, "SQL statements per short remember", stmts(g), "<=", 20, "")
  )
  side(
    "peak RSS MB",
    (f) => f.peakMB,
    ctx.report.bar(SCENARIO, "peak RSS of the cpu scenario", g.peakMB, "<", 300, " MB")
  )

  const row = (
    name: string,
    pick: (f: Figure) => number,
    show = fmt
  ) => [name, show(pick(g)), show(pick(p)), ratio(pick(g), pick(p))]
  const median = (xs: ReadonlyArray<number>) => stats(xs).p50
  ctx.report.table(
    `CPU per operation (issue 39): ${count(g.seq.ops)} sequential remembers, ${
      count(g.search.ops)
    } searches, ${DATASETS} clients × ${
      count(g.tp.ops / DATASETS)
    } remembers, 0 ms models, ${ctx.dims} dimensions; gligabao ran ${
      serverForm(ctx)
    }; CPU = utime + stime of the server process (all threads) ÷ operations; allocation = the main thread's V8 heap${
      ctx.pg
        ? "; on PostgreSQL (a throwaway local cluster, a database a side): backends = the side's database's backends, cluster = all the cluster's processes over the side's phase"
        : ""
    }`,
    ["per operation", "gligabao", "plain", "ratio"],
    [
      row(`CPU ms per remember, sequential${ctx.pg ? ", the server process" : ""}`, cpuSeq),
      row("  of which the main thread", (f) => per(f.seq, f.seq.delta.mainCpuMs)),
      row(
        "  of which other threads (GC helpers, workers)",
        (f) => per(f.seq, f.seq.delta.cpuMs - f.seq.delta.mainCpuMs)
      ),
      row(`CPU ms per remember, ${DATASETS} clients`, cpuTp),
      row("CPU ms per hybrid search", cpuSearch),
      row("  of which the main thread", (f) => per(f.search, f.search.delta.mainCpuMs)),
      ...(ctx.pg
        ? [
          row("PostgreSQL backends' CPU ms per remember, sequential", (f) => backends(f.seq)),
          row("  server + backends", (f) => both(f.seq)),
          row("  the whole cluster (background processes too)", (f) => cluster(f.seq)),
          row(`PostgreSQL backends' CPU ms per remember, ${DATASETS} clients`, (f) => backends(f.tp)),
          row("  server + backends", (f) => both(f.tp)),
          row("PostgreSQL backends' CPU ms per hybrid search", (f) => backends(f.search)),
          row("  server + backends", (f) => both(f.search)),
          row("  the whole cluster (background processes too)", (f) => cluster(f.search))
        ]
        : []),
      row(`remembers/s, ${DATASETS} clients`, rate),
      row("wall ms per remember, p50 (sequential)", (f) => median(f.seq.wall)),
      row("wall ms per search, p50", (f) => median(f.search.wall)),
      row(statements, stmts),
      row("SQL statements per search (main thread)", (f) => per(f.search, f.search.delta.statements)),
      row("MB allocated per remember", (f) => mb(per(f.seq, f.seq.delta.allocatedBytes))),
      row("MB allocated per search", (f) => mb(per(f.search, f.search.delta.allocatedBytes))),
      row(
        `allocation rate MB/s, ${DATASETS} clients`,
        (f) => mb(f.tp.delta.allocatedBytes) / (f.tp.delta.wallMs / 1000)
      ),
      row("LLM calls per remember", (f) => calls(f, "llm")),
      row("embeddings requests per remember", (f) => calls(f, "embeddings")),
      row(
        `bench process CPU ms per remember, ${DATASETS} clients (fake models, clients)`,
        (f) => per(f.tp, f.tp.benchCpuMs)
      ),
      row("facts per search answer", (f) => f.found.reduce((a, b) => a + b, 0) / Math.max(1, f.found.length)),
      row("peak RSS MB", (f) => f.peakMB)
    ]
  )
  const shapes = byShape(g.seq.delta.bySql)
  ctx.report.table(
    `CPU: gligabao's SQL statements per sequential remember, by shape (the probe's count; lists of placeholders and rows shortened to \`…\`, a dataset's table number to N; ${
      shapes.length > TOP_SHAPES ? `the ${TOP_SHAPES} most frequent of ${shapes.length}` : "all"
    })`,
    ["per remember", "statement"],
    shapes.slice(0, TOP_SHAPES).map((s) => [count(s.calls / g.seq.ops), `\`${s.sql.slice(0, 140)}\``])
  )
  const searchShapes = byShape(g.search.delta.bySql)
  ctx.report.table(
    `CPU: gligabao's SQL statements per hybrid search, by shape (main thread; ${
      searchShapes.length > TOP_SHAPES ? `the ${TOP_SHAPES} most frequent of ${searchShapes.length}` : "all"
    })`,
    ["per search", "statement"],
    searchShapes.slice(0, TOP_SHAPES).map((s) => [count(s.calls / g.search.ops), `\`${s.sql.slice(0, 140)}\``])
  )
  const json = (f: Figure) => ({
    cpu_ms_per_remember: cpuSeq(f),
    cpu_ms_per_remember_concurrent: cpuTp(f),
    cpu_ms_per_search: cpuSearch(f),
    ...(ctx.pg
      ? {
        pg_backend_cpu_ms_per_remember: backends(f.seq),
        pg_backend_cpu_ms_per_remember_concurrent: backends(f.tp),
        pg_backend_cpu_ms_per_search: backends(f.search),
        pg_cluster_cpu_ms_per_remember: cluster(f.seq),
        pg_cluster_cpu_ms_per_search: cluster(f.search)
      }
      : {}),
    remembers_per_second: rate(f),
    statements_per_remember: stmts(f),
    allocated_bytes_per_remember: per(f.seq, f.seq.delta.allocatedBytes),
    allocated_bytes_per_search: per(f.search, f.search.delta.allocatedBytes),
    peak_rss_mb: f.peakMB,
    wall_ms_remember: stats(f.seq.wall),
    wall_ms_search: stats(f.search.wall),
    llm_calls_per_remember: calls(f, "llm"),
    embeddings_requests_per_remember: calls(f, "embeddings"),
    phases: Object.fromEntries(
      (["seq", "search", "tp"] as const).map((k) => [k, { ops: f[k].ops, ...f[k].delta }])
    )
  })
  ctx.report.figures[SCENARIO] = {
    datasets: DATASETS,
    clock_ticks_per_second: clockTicks(),
    dims: ctx.dims,
    database: ctx.pg ? "postgres" : "sqlite",
    server: serverForm(ctx),
    gligabao: json(g),
    plain: json(p)
  }
}
