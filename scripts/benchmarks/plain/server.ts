/**
 * The yardstick of the cpu scenario (issue 39): a plain implementation of the durable work of a
 * short remember and of a hybrid search, with node:http, better-sqlite3 and sqlite-vec, and
 * nothing else: no framework, no effect system, no validation library. It talks to the same
 * fake model servers over the same wire (Anthropic Messages with a forced tool, OpenAI
 * embeddings in base64) and writes a SQLite file with the same pragmas as gligabao's.
 *
 * Per remember: read the body; write a queue row and a run row; call extract_graph, then
 * resolve_edges when the candidates SELECT finds stored facts; one embeddings request for the
 * entities and the new facts; one transaction (the artifact, entities upserted by normalized
 * name with their links, facts with links, their FTS5 rows, float32 vectors, the inference
 * rows); finish the run row, delete the queue row, answer JSON. Per search: full text (bm25) and
 * the query's embedding against the dataset's vectors (exact cosine, sqlite-vec's scalar
 * function), fused by reciprocal rank, then the live facts around the best entities.
 *
 * Self-contained on purpose (scripts/benchmarks/plain/start.ts transpiles it alone and runs it
 * with plain node). The prompts and tool schemas are gligabao's, passed in a JSON file, so both
 * servers send the same requests. Environment: PLAIN_DB, PLAIN_ANTHROPIC_URL, PLAIN_OPENAI_URL,
 * PLAIN_DIMS, PLAIN_PROMPTS.
 */
import Database from "better-sqlite3"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as sqliteVec from "sqlite-vec"

interface Prompts {
  readonly model: string
  readonly embeddingModel: string
  readonly extract: { readonly system: string; readonly schema: object; readonly maxTokens: number }
  readonly resolve: { readonly system: string; readonly schema: object; readonly maxTokens: number }
}

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}
const ANTHROPIC = env("PLAIN_ANTHROPIC_URL")
const OPENAI = env("PLAIN_OPENAI_URL")
const DIMS = Number(env("PLAIN_DIMS"))
const PROMPTS = JSON.parse(readFileSync(env("PLAIN_PROMPTS"), "utf8")) as Prompts

const db = new Database(env("PLAIN_DB"))
db.pragma("journal_mode = WAL")
db.pragma("foreign_keys = ON")
db.pragma("secure_delete = ON")
db.pragma("synchronous = NORMAL")
db.pragma("busy_timeout = 5000")
sqliteVec.load(db)
db.exec(`
CREATE TABLE IF NOT EXISTS datasets (id INTEGER PRIMARY KEY, user_id TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT NOT NULL, UNIQUE (user_id, name));
CREATE TABLE IF NOT EXISTS queue (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  body TEXT NOT NULL, queued_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  status TEXT NOT NULL, queued_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, artifact_id INTEGER, error TEXT);
CREATE TABLE IF NOT EXISTS artifacts (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  run_id INTEGER NOT NULL REFERENCES runs(id), text TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  name TEXT NOT NULL, name_key TEXT NOT NULL, type TEXT NOT NULL, description TEXT NOT NULL, created_at TEXT NOT NULL,
  UNIQUE (dataset_id, name_key, type));
CREATE TABLE IF NOT EXISTS entity_artifacts (entity_id INTEGER NOT NULL REFERENCES entities(id),
  artifact_id INTEGER NOT NULL REFERENCES artifacts(id), PRIMARY KEY (entity_id, artifact_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS facts (id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL REFERENCES datasets(id),
  source_id INTEGER NOT NULL REFERENCES entities(id), target_id INTEGER NOT NULL REFERENCES entities(id),
  relation TEXT NOT NULL, description TEXT NOT NULL, valid_at TEXT, invalid_at TEXT, created_at TEXT NOT NULL,
  expired_at TEXT);
CREATE INDEX IF NOT EXISTS facts_source ON facts (source_id);
CREATE INDEX IF NOT EXISTS facts_target ON facts (target_id);
CREATE TABLE IF NOT EXISTS fact_artifacts (fact_id INTEGER NOT NULL REFERENCES facts(id),
  artifact_id INTEGER NOT NULL REFERENCES artifacts(id), PRIMARY KEY (fact_id, artifact_id)) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS entity_fts USING fts5(name, description, dataset_id UNINDEXED);
CREATE VIRTUAL TABLE IF NOT EXISTS fact_fts USING fts5(description, dataset_id UNINDEXED);
CREATE TABLE IF NOT EXISTS entity_vectors (entity_id INTEGER PRIMARY KEY REFERENCES entities(id),
  dataset_id INTEGER NOT NULL, embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS entity_vectors_dataset ON entity_vectors (dataset_id);
CREATE TABLE IF NOT EXISTS fact_vectors (fact_id INTEGER PRIMARY KEY REFERENCES facts(id),
  dataset_id INTEGER NOT NULL, embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS fact_vectors_dataset ON fact_vectors (dataset_id);
CREATE TABLE IF NOT EXISTS inferences (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id),
  dataset_id INTEGER NOT NULL, stage TEXT NOT NULL, model TEXT NOT NULL, input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL, created_at TEXT NOT NULL);
`)

const sql = {
  begin: db.prepare("BEGIN IMMEDIATE"),
  commit: db.prepare("COMMIT"),
  rollback: db.prepare("ROLLBACK"),
  dataset: db.prepare<[string, string, string], { id: number }>(
    `INSERT INTO datasets (user_id, name, created_at) VALUES (?, ?, ?)
     ON CONFLICT (user_id, name) DO UPDATE SET name = excluded.name RETURNING id`
  ),
  findDataset: db.prepare<[string, string], { id: number }>("SELECT id FROM datasets WHERE user_id = ? AND name = ?"),
  queue: db.prepare<[number, string, string], { id: number }>(
    "INSERT INTO queue (dataset_id, body, queued_at) VALUES (?, ?, ?) RETURNING id"
  ),
  run: db.prepare<[number, string, string], { id: number }>(
    "INSERT INTO runs (dataset_id, status, queued_at, started_at) VALUES (?, 'running', ?, ?) RETURNING id"
  ),
  finishRun: db.prepare("UPDATE runs SET status = ?, finished_at = ?, artifact_id = ?, error = ? WHERE id = ?"),
  dequeue: db.prepare("DELETE FROM queue WHERE id = ?"),
  candidates: db.prepare<[number, string, number, string], Candidate>(
    `SELECT f.id, s.name AS source, f.relation, t.name AS target, f.description, f.valid_at
     FROM facts f JOIN entities s ON s.id = f.source_id JOIN entities t ON t.id = f.target_id
     WHERE f.expired_at IS NULL AND f.id IN (
       SELECT x.id FROM entities e JOIN facts x ON x.source_id = e.id
       WHERE e.dataset_id = ? AND e.name_key IN (SELECT value FROM json_each(?))
       UNION
       SELECT x.id FROM entities e JOIN facts x ON x.target_id = e.id
       WHERE e.dataset_id = ? AND e.name_key IN (SELECT value FROM json_each(?)))
     ORDER BY f.id DESC LIMIT 50`
  ),
  artifact: db.prepare<[number, number, string, string], { id: number }>(
    "INSERT INTO artifacts (dataset_id, run_id, text, created_at) VALUES (?, ?, ?, ?) RETURNING id"
  ),
  newEntity: db.prepare<[number, string, string, string, string, string], { id: number }>(
    `INSERT INTO entities (dataset_id, name, name_key, type, description, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (dataset_id, name_key, type) DO NOTHING RETURNING id`
  ),
  entity: db.prepare<[number, string, string], { id: number; description: string }>(
    "SELECT id, description FROM entities WHERE dataset_id = ? AND name_key = ? AND type = ?"
  ),
  describeEntity: db.prepare("UPDATE entities SET description = ? WHERE id = ?"),
  entityFts: db.prepare("INSERT INTO entity_fts (rowid, name, description, dataset_id) VALUES (?, ?, ?, ?)"),
  entityFtsUpdate: db.prepare("UPDATE entity_fts SET description = ? WHERE rowid = ?"),
  entityVector: db.prepare("INSERT OR REPLACE INTO entity_vectors (entity_id, dataset_id, embedding) VALUES (?, ?, ?)"),
  entityLink: db.prepare("INSERT OR IGNORE INTO entity_artifacts (entity_id, artifact_id) VALUES (?, ?)"),
  fact: db.prepare<[number, number, number, string, string, string | null, string | null, string], { id: number }>(
    `INSERT INTO facts (dataset_id, source_id, target_id, relation, description, valid_at, invalid_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`
  ),
  expireFact: db.prepare(
    "UPDATE facts SET invalid_at = coalesce(invalid_at, ?), expired_at = ? WHERE id = ? AND expired_at IS NULL"
  ),
  factFts: db.prepare("INSERT INTO fact_fts (rowid, description, dataset_id) VALUES (?, ?, ?)"),
  factVector: db.prepare("INSERT INTO fact_vectors (fact_id, dataset_id, embedding) VALUES (?, ?, ?)"),
  factLink: db.prepare("INSERT OR IGNORE INTO fact_artifacts (fact_id, artifact_id) VALUES (?, ?)"),
  inference: db.prepare(
    `INSERT INTO inferences (run_id, dataset_id, stage, model, input_tokens, output_tokens, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`
  ),
  textFacts: db.prepare<[string, number, number], { id: number }>(
    `SELECT fact_fts.rowid AS id FROM fact_fts JOIN facts ON facts.id = fact_fts.rowid
     WHERE fact_fts MATCH ? AND fact_fts.dataset_id = ? AND facts.expired_at IS NULL
     ORDER BY bm25(fact_fts) LIMIT ?`
  ),
  textEntities: db.prepare<[string, number, number], { id: number }>(
    `SELECT rowid AS id FROM entity_fts WHERE entity_fts MATCH ? AND dataset_id = ? ORDER BY bm25(entity_fts) LIMIT ?`
  ),
  nearFacts: db.prepare<[number, Buffer, number], { id: number }>(
    `SELECT v.fact_id AS id FROM fact_vectors v JOIN facts f ON f.id = v.fact_id
     WHERE v.dataset_id = ? AND f.expired_at IS NULL ORDER BY vec_distance_cosine(v.embedding, ?) LIMIT ?`
  ),
  nearEntities: db.prepare<[number, Buffer, number], { id: number }>(
    `SELECT entity_id AS id FROM entity_vectors WHERE dataset_id = ?
     ORDER BY vec_distance_cosine(embedding, ?) LIMIT ?`
  ),
  around: db.prepare<[string, string, number], { id: number }>(
    `SELECT id FROM facts WHERE expired_at IS NULL
     AND (source_id IN (SELECT value FROM json_each(?)) OR target_id IN (SELECT value FROM json_each(?)))
     ORDER BY id DESC LIMIT ?`
  ),
  factRows: db.prepare<[string], FactRow>(
    `SELECT f.id, s.name AS source, f.relation, t.name AS target, f.description, f.valid_at, f.invalid_at
     FROM facts f JOIN entities s ON s.id = f.source_id JOIN entities t ON t.id = f.target_id
     WHERE f.id IN (SELECT value FROM json_each(?))`
  ),
  entityRows: db.prepare<[string], { id: number; name: string; type: string; description: string }>(
    "SELECT id, name, type, description FROM entities WHERE id IN (SELECT value FROM json_each(?))"
  )
}

interface Candidate {
  readonly id: number
  readonly source: string
  readonly relation: string
  readonly target: string
  readonly description: string
  readonly valid_at: string | null
}
interface FactRow extends Candidate {
  readonly invalid_at: string | null
}
interface Usage {
  readonly stage: string
  readonly model: string
  readonly input: number
  readonly output: number
}

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

const nameKey = (name: string) => name.normalize("NFKC").trim().replace(/\s+/g, " ").toLowerCase()
const relationKey = (relation: string) => relation.trim().toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "_")

/** A forced tool call on the Messages API: the tool's input and the usage. */
const callTool = async (stage: "extract_graph" | "resolve_edges", user: string): Promise<[any, Usage]> => {
  const prompt = stage === "extract_graph" ? PROMPTS.extract : PROMPTS.resolve
  const res = await fetch(`${ANTHROPIC}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "bench", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({
      model: PROMPTS.model,
      max_tokens: prompt.maxTokens,
      system: prompt.system,
      messages: [{ role: "user", content: user }],
      tools: [{ name: stage, input_schema: prompt.schema }],
      tool_choice: { type: "tool", name: stage }
    })
  })
  const body = await res.json() as any
  if (!res.ok) throw new HttpError(502, `${stage}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`)
  const block = body.content?.find((b: any) => b?.type === "tool_use")
  if (block === undefined) throw new HttpError(502, `${stage}: no tool_use block`)
  return [block.input, { stage, model: body.model, input: body.usage.input_tokens, output: body.usage.output_tokens }]
}

/** One embeddings request: little-endian float32 bytes per text, as the wire has them. */
const embed = async (texts: ReadonlyArray<string>, stage: string): Promise<[Array<Buffer>, Usage]> => {
  const res = await fetch(`${OPENAI}/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    body: JSON.stringify({ model: PROMPTS.embeddingModel, input: texts, dimensions: DIMS, encoding_format: "base64" })
  })
  const body = await res.json() as any
  if (!res.ok) throw new HttpError(502, `embeddings: ${res.status} ${JSON.stringify(body).slice(0, 200)}`)
  const vectors = body.data.map((d: any) => Buffer.from(d.embedding, "base64"))
  return [vectors, { stage, model: body.model, input: body.usage.prompt_tokens, output: 0 }]
}

// remembers into one dataset run one after another (the candidates must see the last one's facts)
const lanes = new Map<number, Promise<unknown>>()
const inLane = <A>(datasetId: number, f: () => Promise<A>): Promise<A> => {
  const next = (lanes.get(datasetId) ?? Promise.resolve()).then(f, f)
  lanes.set(datasetId, next.catch(() => undefined))
  return next
}

const text = (value: unknown, field: string): string => {
  if (typeof value !== "string" || value.trim() === "") throw new HttpError(400, `${field} must be a non-empty string`)
  return value
}

const remember = async (raw: string) => {
  const body = JSON.parse(raw)
  const [user, name, content] = [text(body.user_id, "user_id"), text(body.dataset, "dataset"), text(body.text, "text")]
  const queuedAt = new Date().toISOString()
  const reference: string = typeof body.reference_time === "string" ? body.reference_time : queuedAt
  const datasetId = sql.dataset.get(user, name, queuedAt)!.id
  const queueId = sql.queue.get(datasetId, raw, queuedAt)!.id
  const runId = sql.run.get(datasetId, queuedAt, queuedAt)!.id
  try {
    const answer = await inLane(datasetId, () => pipeline(datasetId, runId, content, reference))
    sql.finishRun.run("succeeded", new Date().toISOString(), answer.artifact_id, null, runId)
    return { remember_run_id: runId, ...answer }
  } catch (error) {
    sql.finishRun.run("failed", new Date().toISOString(), null, String(error), runId)
    throw error
  } finally {
    sql.dequeue.run(queueId)
  }
}

const pipeline = async (datasetId: number, runId: number, content: string, reference: string) => {
  const usages: Array<Usage> = []
  const [graph, extractUsage] = await callTool(
    "extract_graph",
    `Reference time: ${reference}\n\n<text>\n${content}\n</text>`
  )
  usages.push(extractUsage)
  const entities = new Map<string, { name: string; type: string; description: string; id: number }>()
  for (const e of graph.entities ?? []) {
    const key = nameKey(String(e.name))
    if (key !== "" && !entities.has(key)) {
      entities.set(key, {
        name: String(e.name).trim(),
        type: e.type || "other",
        description: e.description ?? "",
        id: 0
      })
    }
  }
  const facts = (graph.edges ?? []).map((e: any, index: number) => {
    for (const end of [e.source, e.target]) {
      const key = nameKey(String(end))
      if (!entities.has(key)) entities.set(key, { name: String(end).trim(), type: "other", description: "", id: 0 })
    }
    const invalidAt: string | null = e.invalid_at ?? null
    return {
      index,
      source: nameKey(String(e.source)),
      target: nameKey(String(e.target)),
      relation: relationKey(String(e.relation)),
      description: e.description || `${e.source} ${e.relation} ${e.target}`,
      valid_at: (e.valid_at ?? (invalidAt === null ? reference : null)) as string | null,
      invalid_at: invalidAt
    }
  })

  const keys = JSON.stringify([...entities.keys()])
  const candidates = sql.candidates.all(datasetId, keys, datasetId, keys)
  const duplicates = new Map<number, number>()
  const contradictions = new Map<number, Array<number>>()
  if (candidates.length > 0 && facts.length > 0) {
    const [resolved, usage] = await callTool(
      "resolve_edges",
      JSON.stringify({
        reference_time: reference,
        new_facts: facts.map((f: any) => ({
          index: f.index,
          source: entities.get(f.source)!.name,
          relation: f.relation,
          target: entities.get(f.target)!.name,
          valid_at: f.valid_at
        })),
        existing_facts: candidates.map((c) => ({
          id: c.id,
          source: c.source,
          relation: c.relation,
          target: c.target,
          valid_at: c.valid_at
        }))
      })
    )
    usages.push(usage)
    const known = new Set(candidates.map((c) => c.id))
    for (const d of resolved.duplicates ?? []) {
      if (known.has(Number(d.existing)) && !duplicates.has(Number(d.new))) duplicates.set(Number(d.new), d.existing)
    }
    for (const c of resolved.contradictions ?? []) {
      const ids = (Array.isArray(c.existing) ? c.existing : [c.existing]).map(Number).filter((id: number) =>
        known.has(id)
      )
      if (ids.length > 0) contradictions.set(Number(c.new), ids)
    }
  }

  const fresh = facts.filter((f: any) => !duplicates.has(f.index))
  const entityList = [...entities.values()]
  const [vectors, embedUsage] = await embed(
    [...entityList.map((e) => `${e.name} (${e.type}): ${e.description}`), ...fresh.map((f: any) => f.description)],
    "embeddings"
  )
  usages.push(embedUsage)

  const now = new Date().toISOString()
  sql.begin.run()
  try {
    const artifactId = sql.artifact.get(datasetId, runId, content, now)!.id
    entityList.forEach((e, i) => {
      const key = nameKey(e.name)
      const created = sql.newEntity.get(datasetId, e.name, key, e.type, e.description, now)
      if (created !== undefined) {
        e.id = created.id
        sql.entityFts.run(e.id, e.name, e.description, datasetId)
        sql.entityVector.run(e.id, datasetId, vectors[i])
      } else {
        const stored = sql.entity.get(datasetId, key, e.type)!
        e.id = stored.id
        if (e.description !== "" && e.description !== stored.description) {
          sql.describeEntity.run(e.description, e.id)
          sql.entityFtsUpdate.run(e.description, e.id)
          sql.entityVector.run(e.id, datasetId, vectors[i])
        }
      }
      sql.entityLink.run(e.id, artifactId)
    })
    let stored = 0
    for (const f of facts) {
      const existing = duplicates.get(f.index)
      if (existing !== undefined) {
        sql.factLink.run(existing, artifactId)
        continue
      }
      const id = sql.fact.get(
        datasetId,
        entities.get(f.source)!.id,
        entities.get(f.target)!.id,
        f.relation,
        f.description,
        f.valid_at,
        f.invalid_at,
        now
      )!.id
      sql.factLink.run(id, artifactId)
      sql.factFts.run(id, f.description, datasetId)
      sql.factVector.run(id, datasetId, vectors[entityList.length + stored])
      stored += 1
      for (const old of contradictions.get(f.index) ?? []) sql.expireFact.run(f.valid_at ?? now, now, old)
    }
    for (const u of usages) sql.inference.run(runId, datasetId, u.stage, u.model, u.input, u.output, now)
    sql.commit.run()
    return { artifact_id: artifactId, entities: entityList.length, facts: stored }
  } catch (error) {
    sql.rollback.run()
    throw error
  }
}

/** Reciprocal rank fusion of ranked id lists (k = 60). */
const fuse = (lists: ReadonlyArray<ReadonlyArray<{ id: number }>>): Array<number> => {
  const scores = new Map<number, number>()
  for (const list of lists) list.forEach((r, rank) => scores.set(r.id, (scores.get(r.id) ?? 0) + 1 / (61 + rank)))
  return [...scores].sort((a, b) => b[1] - a[1]).map(([id]) => id)
}

const search = async (raw: string) => {
  const body = JSON.parse(raw)
  const [user, name, query] = [text(body.user_id, "user_id"), text(body.dataset, "dataset"), text(body.query, "query")]
  const limit = typeof body.limit === "number" ? body.limit : 10
  const dataset = sql.findDataset.get(user, name)
  if (dataset === undefined) throw new HttpError(404, `no dataset ${name}`)
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  const match = words.map((w) => `"${w}"`).join(" OR ")
  const ranked = 3 * limit
  const [[vector]] = await embed([query], "search")
  const factIds = fuse([
    match === "" ? [] : sql.textFacts.all(match, dataset.id, ranked),
    sql.nearFacts.all(dataset.id, vector!, ranked)
  ])
  const entityIds = fuse([
    match === "" ? [] : sql.textEntities.all(match, dataset.id, ranked),
    sql.nearEntities.all(dataset.id, vector!, ranked)
  ]).slice(0, limit)
  // the graph neighbourhood: live facts of the best entities, after the ranked facts
  const best = JSON.stringify(entityIds.slice(0, 3))
  const ids = [...new Set([...factIds.slice(0, limit), ...sql.around.all(best, best, limit).map((r) => r.id)])]
    .slice(0, limit)
  const facts = new Map(sql.factRows.all(JSON.stringify(ids)).map((f) => [f.id, f]))
  const entityRows = new Map(sql.entityRows.all(JSON.stringify(entityIds)).map((e) => [e.id, e]))
  return {
    dataset: name,
    query,
    facts: ids.map((id) => facts.get(id)!),
    entities: entityIds.map((id) => entityRows.get(id)!)
  }
}

const read = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const send = (res: ServerResponse, status: number, body: unknown) => {
  const json = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) })
  res.end(json)
}

const server = createServer((req, res) => {
  const route = `${req.method} ${req.url}`
  const handler: ((raw: string) => Promise<unknown>) | undefined = route === "POST /remember"
    ? remember
    : route === "POST /search"
    ? search
    : undefined
  if (handler === undefined) return send(res, 404, { error: `no route ${route}` })
  read(req).then(handler).then(
    (answer) => send(res, 200, answer),
    (error) => send(res, error instanceof HttpError ? error.status : 500, { error: String(error) })
  )
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address !== null && typeof address === "object") console.log(`listening on http://127.0.0.1:${address.port}`)
})
// (server.close would wait for the clients' idle keep-alive connections)
process.on("SIGTERM", () => {
  db.close()
  process.exit(0)
})
