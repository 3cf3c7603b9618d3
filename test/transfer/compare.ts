/**
 * Reading two databases the same way to compare them: an app over each (the composition the
 * server uses, in process), and the canonical form of what they answer, "equal up to ids":
 * every id replaced by its rank among the ids of its kind in the same answer (a load keeps the
 * source's order of rows, so equal answers have equal ranks).
 */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { Chunk, Effect, Either, Layer, ManagedRuntime, Stream } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { appLayerFor } from "../../layers/App.js"
import { loadConfig } from "../../src/Config.js"
import { forgetArtifactMemory, searchMemory } from "../../src/operations.js"
import { Reads } from "../../src/query/Reads.js"
import { validateGraphRequest } from "../../src/query/requests.js"
import type { Json } from "./world.js"

export interface Database {
  readonly db?: string
  readonly databaseUrl?: string
  readonly imageDir: string
}

export type App = ReturnType<typeof appOf>

/** The app (reads, forgets) over a database, configured by `env` as the commands are (no config file). */
export const appOf = (database: Database, env: Readonly<Record<string, string>>, dir: string) => {
  const config = join(dir, "empty.toml")
  writeFileSync(config, "")
  const layer = Layer.unwrapEffect(
    Effect.map(
      Effect.orDie(loadConfig({ config, ...database }, env)),
      (loaded) => appLayerFor(loaded)
    )
  ).pipe(Layer.provide(NodeContext.layer))
  const runtime = ManagedRuntime.make(layer)
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => runtime.runPromise(effect as Effect.Effect<A, E, never>)
  return {
    runtime,
    /** `GET /v1/gb/graph?include_expired=true` (the query parameters as strings, as the endpoint takes them) */
    exportOf: (user_id: string, dataset: string, extra: Record<string, string> = {}) =>
      run(Effect.gen(function*() {
        const request = validateGraphRequest({ user_id, dataset, include_expired: "true", format: "json", ...extra })
        if (Either.isLeft(request)) return yield* request.left
        const exported = yield* (yield* Reads).exportGraph(request.right)
        const pieces = yield* Stream.runCollect(exported.body)
        return JSON.parse(Chunk.toReadonlyArray(pieces).join("")) as Json
      })),
    search: (body: Json) => run(searchMemory(body as any)) as Promise<Json>,
    forget: (body: Json) => run(forgetArtifactMemory(body as any)) as Promise<Json>,
    query: (sql: string) =>
      run(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<Json>(sql))) as Promise<ReadonlyArray<Json>>,
    dispose: () => runtime.dispose()
  }
}

type Kind = "E" | "F" | "A" | "I" | "M"

const ID_OF: Record<string, Kind> = {
  inference_id: "I",
  model_id: "M",
  source_id: "E",
  target_id: "E",
  entity_id: "E",
  artifact_id: "A",
  parent_id: "A",
  edge_id: "F"
}
const IDS_OF: Record<string, Kind> = { artifact_ids: "A", entity_ids: "E", fact_ids: "F", edge_ids: "F" }
const LISTS: Record<string, Kind> = { entities: "E", edges: "F", facts: "F", artifacts: "A", chunks: "A" }

/** Ids of each kind in the document, by rank (1 = smallest). */
const ranksOf = (doc: Json) => {
  const ids: Record<Kind, Set<number>> = { E: new Set(), F: new Set(), A: new Set(), I: new Set(), M: new Set() }
  const collect = (value: unknown, list: Kind | null) => {
    if (Array.isArray(value)) return value.forEach((v) => collect(v, list))
    if (typeof value !== "object" || value === null) return
    for (const [key, v] of Object.entries(value)) {
      if (key === "id" && list !== null && typeof v === "number") ids[list].add(v)
      else if (ID_OF[key] !== undefined && typeof v === "number") ids[ID_OF[key]].add(v)
      else if (IDS_OF[key] !== undefined && Array.isArray(v)) v.forEach((id) => ids[IDS_OF[key]!].add(id))
      else collect(v, LISTS[key] ?? null)
    }
  }
  collect(doc, null)
  const rank = (set: Set<number>) => new Map([...set].sort((a, b) => a - b).map((id, i) => [id, i + 1] as const))
  return { E: rank(ids.E), F: rank(ids.F), A: rank(ids.A), I: rank(ids.I), M: rank(ids.M) }
}

/** The document with each id replaced by `<kind><rank>`, and the read's own instant (`known_at`, `as_of`) left out. */
export const canonical = (doc: Json): Json => {
  const ranks = ranksOf(doc)
  const name = (kind: Kind, id: unknown) => (typeof id === "number" ? `${kind}${ranks[kind].get(id)}` : id)
  const walk = (value: unknown, list: Kind | null): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, list))
    if (typeof value !== "object" || value === null) return value
    const out: Json = {}
    for (const [key, v] of Object.entries(value)) {
      if (key === "id" && list !== null) out[key] = name(list, v)
      else if (ID_OF[key] !== undefined) out[key] = name(ID_OF[key], v)
      else if (IDS_OF[key] !== undefined && Array.isArray(v)) out[key] = v.map((id) => name(IDS_OF[key]!, id))
      else out[key] = walk(v, LISTS[key] ?? null)
    }
    return out
  }
  const { as_of: _a, known_at: _k, dataset, ...rest } = doc
  return walk({ ...rest, dataset: dataset === undefined ? undefined : { ...dataset, id: "D" } }, null) as Json
}

/** A search's facts as a set of what they say (order apart: each database ranks its full text its own way). */
export const factsSaid = (answer: Json): Array<string> =>
  (answer.facts as Array<Json>).map((f) =>
    [f.source, f.relation, f.target, f.description, f.valid_at, f.invalid_at ?? "", f.expired_at ?? ""].join(" | ")
  ).sort()

export const entitiesSaid = (answer: Json): Array<string> =>
  (answer.entities as Array<Json>).map((e) => `${e.name} (${e.type})`).sort()
