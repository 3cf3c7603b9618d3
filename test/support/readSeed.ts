/**
 * Seeds a graph for read-side tests straight through the repositories, with every time chosen
 * by the test (the remember pipeline stamps "now"): artifacts, entities, facts (open, closed,
 * expired), their artifact and session links, and optionally their vectors (hash embeddings
 * into whatever VectorStore is provided), named as spec/contracts.md section 10 names them.
 *
 *   const g = yield* seedGraph({ user: "alice", artifacts: [...], entities: [...], facts: [...] })
 *   g.fact("F1")  // the id of the fact with key F1
 */
import { Effect } from "effect"
import { hashEmbedding } from "../../layers/testing/HashEmbeddings.js"
import type { ArtifactKind } from "../../src/domain/Stages.js"
import {
  chunkVectorId,
  edgeVectorId,
  entityText,
  entityVectorId,
  indexName,
  summaryVectorId
} from "../../src/pipeline/vectors.js"
import { Database } from "../../src/services/Database.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { GraphRepo } from "../../src/services/GraphRepo.js"
import { InferencesRepo } from "../../src/services/InferencesRepo.js"
import { VectorStore } from "../../src/services/VectorStore.js"

export interface SeedArtifact {
  readonly key: string
  readonly kind?: ArtifactKind
  readonly text: string
  readonly parent?: string
  readonly session?: string
  readonly at: string
}

export interface SeedEntity {
  readonly name: string
  readonly type?: string
  readonly description?: string
  readonly at: string
  readonly artifacts?: ReadonlyArray<string>
  readonly sessions?: ReadonlyArray<string>
}

export interface SeedFact {
  readonly key: string
  readonly source: string
  readonly target: string
  readonly relation: string
  readonly description: string
  /** null: the start is unknown (give it an invalid_at) */
  readonly valid_at: string | null
  readonly invalid_at?: string
  /** ingestion time */
  readonly at: string
  readonly expired_at?: string
  readonly artifacts?: ReadonlyArray<string>
  readonly sessions?: ReadonlyArray<string>
}

export interface SeedSpec {
  readonly user: string
  readonly dataset?: string
  readonly artifacts?: ReadonlyArray<SeedArtifact>
  readonly entities?: ReadonlyArray<SeedEntity>
  readonly facts?: ReadonlyArray<SeedFact>
  /** the extraction model of every entity and fact (registered in gb_models) */
  readonly model?: string
  /** writes hash-embedding vectors of this many dimensions to the provided VectorStore */
  readonly vectorDimensions?: number
}

export interface SeededGraph {
  readonly datasetId: number
  readonly artifact: (key: string) => number
  readonly entity: (name: string) => number
  readonly fact: (key: string) => number
}

const nameKey = (name: string) => name.toLowerCase().replace(/\s+/g, " ").trim()

const lookup = (what: string, map: ReadonlyMap<string, number>) => (key: string) => {
  const id = map.get(key)
  if (id === undefined) throw new Error(`seed: no ${what} ${key}`)
  return id
}

/** Written in one Database transaction, as the store writes (its commit updates the indexes). */
export const seedGraph = (spec: SeedSpec) =>
  Effect.flatMap(Database, (database) => database.withTransaction(seedRows(spec)))

const seedRows = (spec: SeedSpec) =>
  Effect.gen(function*() {
    const datasets = yield* DatasetsRepo
    const graph = yield* GraphRepo
    const first = [...(spec.artifacts ?? []), ...(spec.entities ?? []), ...(spec.facts ?? [])].map((x) =>
      x.at
    ).sort()[0]
    const dataset = yield* datasets.getOrCreate(spec.user, spec.dataset ?? "main", first ?? "2024-01-01T00:00:00.000Z")
    const modelId = spec.model === undefined
      ? null
      : (yield* (yield* InferencesRepo).registerModel("scripted", spec.model, dataset.created_at)).id

    const artifacts = new Map<string, number>()
    for (const a of spec.artifacts ?? []) {
      const row = yield* graph.insertArtifact({
        dataset_id: dataset.id,
        kind: a.kind ?? "knowledge",
        text: a.text,
        parent_id: a.parent === undefined ? null : lookup("artifact", artifacts)(a.parent),
        session_id: a.session ?? null,
        valid_at: a.at,
        created_at: a.at,
        inference_id: null,
        query: null,
        metadata: null
      })
      artifacts.set(a.key, row.id)
    }

    const entities = new Map<string, number>()
    for (const e of spec.entities ?? []) {
      const [row] = yield* graph.upsertEntities(dataset.id, [{
        name: e.name,
        name_key: nameKey(e.name),
        type: e.type ?? "other",
        description: e.description ?? "",
        model_id: modelId,
        created_at: e.at
      }])
      entities.set(e.name, row!.id)
      for (const a of e.artifacts ?? []) yield* graph.linkEntityArtifacts(lookup("artifact", artifacts)(a), [row!.id])
      for (const s of e.sessions ?? []) yield* graph.linkEntitySessions(s, [row!.id])
    }

    const facts = new Map<string, number>()
    for (const f of spec.facts ?? []) {
      const [row] = yield* graph.insertEdges([{
        dataset_id: dataset.id,
        source_id: lookup("entity", entities)(f.source),
        target_id: lookup("entity", entities)(f.target),
        relation: f.relation,
        description: f.description,
        valid_at: f.valid_at,
        invalid_at: f.invalid_at ?? null,
        created_at: f.at,
        expired_at: f.expired_at ?? null,
        artifact_id: f.artifacts?.[0] === undefined ? null : lookup("artifact", artifacts)(f.artifacts[0]),
        model_id: modelId
      }])
      facts.set(f.key, row!.id)
      for (const a of f.artifacts ?? []) yield* graph.linkEdgeArtifacts(lookup("artifact", artifacts)(a), [row!.id])
      for (const s of f.sessions ?? []) yield* graph.linkEdgeSessions(s, [row!.id])
    }

    if (spec.vectorDimensions !== undefined) {
      const dims = spec.vectorDimensions
      const store = yield* VectorStore
      const vector = (id: string, text: string, metadata: Record<string, string | number>) => ({
        id,
        values: hashEmbedding(text, dims),
        metadata: { dataset_id: dataset.id, ...metadata }
      })
      yield* store.upsert(
        indexName(dataset.id, "entities"),
        (spec.entities ?? []).map((e) => {
          const id = entities.get(e.name)!
          return vector(
            entityVectorId(id),
            entityText({ name: e.name, type: e.type ?? "other", description: e.description ?? "" }),
            {
              kind: "entity",
              entity_id: id,
              name_key: nameKey(e.name)
            }
          )
        })
      )
      yield* store.upsert(
        indexName(dataset.id, "edges"),
        (spec.facts ?? []).map((f) => {
          const id = facts.get(f.key)!
          return vector(edgeVectorId(id), f.description, { kind: "edge", edge_id: id, relation: f.relation })
        })
      )
      const chunks = (spec.artifacts ?? []).filter((a) => a.kind === "chunk")
      yield* store.upsert(
        indexName(dataset.id, "chunks"),
        chunks.map((a) =>
          vector(chunkVectorId(artifacts.get(a.key)!), a.text, { kind: "chunk", artifact_id: artifacts.get(a.key)! })
        )
      )
      const summaries = (spec.artifacts ?? []).filter((a) => a.kind === "chunk_summary")
      yield* store.upsert(
        indexName(dataset.id, "summaries"),
        summaries.map((a) =>
          vector(summaryVectorId(artifacts.get(a.key)!), a.text, {
            kind: "summary",
            artifact_id: artifacts.get(a.key)!
          })
        )
      )
    }

    return {
      datasetId: dataset.id,
      artifact: lookup("artifact", artifacts),
      entity: lookup("entity", entities),
      fact: lookup("fact", facts)
    } satisfies SeededGraph
  })
