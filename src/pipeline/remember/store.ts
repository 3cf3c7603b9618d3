/**
 * Stage store: everything a text yields, written in one transaction (seed: How it works,
 * step 4). Its vectors are embedded before the transaction opens, so no model or network call
 * happens inside it; a failure rolls everything back, including the creation of a new dataset.
 */
import { Effect } from "effect"
import type { VectorWriteFailed } from "../../domain/Errors.js"
import type { ArtifactRow, DatasetRow, EdgeWithNames, EntityRow } from "../../domain/Rows.js"
import type { ArtifactKind } from "../../domain/Stages.js"
import { decodeAttributes, encodeAttributes, foldAttributes } from "../../kernel/datasetSchema.js"
import { entityKey, type NormalizedEntity } from "../../kernel/normalize.js"
import type { ReconciliationPlan } from "../../kernel/temporal.js"
import type { DatasetsRepo } from "../../services/DatasetsRepo.js"
import type { ForgetRepo } from "../../services/ForgetRepo.js"
import type { GraphRepo, NewEdge } from "../../services/GraphRepo.js"
import type { OutboxItem, VectorOutbox } from "../../services/VectorOutbox.js"
import type { VectorStore } from "../../services/VectorStore.js"
import { seriesDetail, type SeriesWrite, type StoredSeries, storeTextSeries } from "../series/store.js"
import { settleRestarted } from "../settle.js"
import { chunkVectorId, edgeVectorId, entityVectorId, indexName, recordVectors, summaryVectorId } from "../vectors.js"
import type { Candidates, Endpoint } from "./candidates.js"
import { type PreparedVectors, prepareVectors, type VectorCache } from "./embed.js"
import { embedContext, type RunContext } from "./RunContext.js"
import type { Unit, UnitWork } from "./unit.js"

export interface StoreInput {
  readonly userId: string
  readonly datasetName: string
  /** the dataset's live row, when the caller holds the dataset's lock and has read it */
  readonly dataset?: DatasetRow | null | undefined
  readonly kind: ArtifactKind
  readonly text: string
  readonly parentId: number | null
  readonly sessionId: string | null
  readonly metadata: Record<string, unknown> | null
  /** the queries a web_search artifact issued */
  readonly query?: string | null | undefined
  /** the first chunk of a document also writes the document (the parent artifact) */
  readonly createParent?:
    | { readonly kind: ArtifactKind; readonly text: string; readonly metadata?: Record<string, unknown> | null }
    | undefined
  /** a chunk's summary: an artifact of its own, child of the chunk */
  readonly summary?: { readonly text: string; readonly inferenceId: number } | undefined
  readonly referenceTime: string
  readonly now: string
  /** gb_models id of the extract_graph model: the model of the knowledge */
  readonly modelId: number | null
  readonly entities: ReadonlyArray<NormalizedEntity>
  readonly candidates: Candidates
  readonly plan: ReconciliationPlan
  /** computed before the transaction; null without embeddings */
  readonly vectors: PreparedVectors | null
}

export interface Stored {
  readonly dataset: DatasetRow
  readonly artifact: ArtifactRow
  readonly parent: ArtifactRow | null
  readonly summary: ArtifactRow | null
  /** the text's entities as stored, in extraction order */
  readonly entities: ReadonlyArray<EntityRow>
  /** each fact of the text in its stored state (a repeat is the stored edge), in extraction order */
  readonly edges: ReadonlyArray<EdgeWithNames>
  readonly invalidated: ReadonlyArray<number>
  readonly inserted: number
  readonly duplicates: number
  /** this unit's vectors waiting in the outbox, to be written after commit (none for a transactional store) */
  readonly outboxIds: ReadonlyArray<number>
  readonly embeddedEntities: number
  readonly embeddedEdges: number
  readonly embeddedChunks: number
  readonly embeddedSummaries: number
}

/**
 * The attributes a text stated of entities already stored: each key takes the value this text
 * stated (foldAttributes), as a forget reading the statements again in order gives. An upsert
 * writes a new entity's own and leaves a stored one's, so the rows it returned are patched.
 */
const restateAttributes = (
  graph: GraphRepo["Type"],
  rows: ReadonlyArray<EntityRow>,
  stated: ReadonlyMap<string, NormalizedEntity>
): Effect.Effect<ReadonlyArray<EntityRow>> => {
  const changed: Array<{ readonly id: number; readonly attributes: string | null }> = []
  const out = rows.map((row) => {
    const own = stated.get(entityKey(row.name_key, row.type))?.attributes
    if (own === undefined) return row
    const attributes = encodeAttributes(foldAttributes([decodeAttributes(row.attributes), own]))
    if (attributes === (row.attributes ?? null)) return row
    changed.push({ id: row.id, attributes })
    return { ...row, attributes }
  })
  return changed.length === 0 ? Effect.succeed(rows) : Effect.as(graph.setEntityAttributes(changed), out)
}

/** Writes a text's rows; the caller holds the transaction. */
export const writeText = (
  deps: {
    readonly datasets: DatasetsRepo["Type"]
    readonly graph: GraphRepo["Type"]
    readonly forget: ForgetRepo["Type"]
    readonly outbox: VectorOutbox["Type"]
    readonly vectors: VectorStore["Type"]
  },
  input: StoreInput
): Effect.Effect<Stored, VectorWriteFailed> =>
  Effect.gen(function*() {
    const { graph } = deps
    const dataset = input.dataset ?? (yield* deps.datasets.getOrCreate(input.userId, input.datasetName, input.now))
    const parent = input.createParent === undefined ? null : yield* graph.insertArtifact({
      dataset_id: dataset.id,
      kind: input.createParent.kind,
      text: input.createParent.text,
      parent_id: null,
      session_id: input.sessionId,
      valid_at: input.referenceTime,
      created_at: input.now,
      inference_id: null,
      query: null,
      metadata: input.createParent.metadata ?? null
    })
    const artifact = yield* graph.insertArtifact({
      dataset_id: dataset.id,
      kind: input.kind,
      text: input.text,
      parent_id: parent?.id ?? input.parentId,
      session_id: input.sessionId,
      valid_at: input.referenceTime,
      created_at: input.now,
      inference_id: null,
      query: input.query ?? null,
      metadata: input.metadata
    })

    const summary = input.summary === undefined ? null : yield* graph.insertArtifact({
      dataset_id: dataset.id,
      kind: "chunk_summary",
      text: input.summary.text,
      parent_id: artifact.id,
      session_id: input.sessionId,
      valid_at: input.referenceTime,
      created_at: input.now,
      inference_id: input.summary.inferenceId,
      query: null,
      metadata: null
    })

    // The text's entities and the `other` entities made for unnamed endpoints, upserted once.
    const toWrite = new Map<string, NormalizedEntity>()
    for (const e of [...input.entities, ...input.candidates.endpointEntities]) {
      const k = entityKey(e.name_key, e.type)
      if (!toWrite.has(k)) toWrite.set(k, e)
    }
    const upserted = yield* graph.upsertEntities(
      dataset.id,
      [...toWrite.values()].map(({ attributes, ...e }) => ({
        ...e,
        attributes: encodeAttributes(attributes),
        model_id: input.modelId,
        created_at: input.now
      }))
    )
    const written = yield* restateAttributes(graph, upserted, toWrite)
    const idByKey = new Map(written.map((row) => [entityKey(row.name_key, row.type), row.id] as const))
    const idOf = (endpoint: Endpoint): number =>
      endpoint.kind === "stored"
        ? endpoint.id
        : idByKey.get(entityKey(endpoint.entity.name_key, endpoint.entity.type))!

    // Every entity the artifact yields is linked, including stored ones an edge names; the
    // link keeps the spelling and description this text gave (none for an endpoint only).
    const entityIds = new Set(written.map((row) => row.id))
    for (const r of input.candidates.resolved) {
      entityIds.add(idOf(r.source))
      entityIds.add(idOf(r.target))
    }
    const statedBy = new Map(
      [...toWrite.values()].map((e) => [idByKey.get(entityKey(e.name_key, e.type))!, e] as const)
    )
    yield* graph.linkEntityStatements(
      artifact.id,
      [...entityIds].map((id) => {
        const stated = statedBy.get(id)
        return {
          entity_id: id,
          name: stated?.name ?? null,
          description: stated?.description ?? null,
          attributes: encodeAttributes(stated?.attributes)
        }
      })
    )

    const inserts: Array<{ readonly index: number; readonly edge: NewEdge }> = []
    const edgeIdOfFact = new Map<number, number>()
    for (const fact of input.plan.facts) {
      if (fact.action === "duplicate") {
        edgeIdOfFact.set(fact.index, fact.edge_id)
        continue
      }
      const r = input.candidates.resolved[fact.index]!
      inserts.push({
        index: fact.index,
        edge: {
          dataset_id: dataset.id,
          source_id: idOf(r.source),
          target_id: idOf(r.target),
          relation: r.edge.relation,
          description: r.edge.description,
          valid_at: r.edge.valid_at,
          invalid_at: fact.invalid_at ?? r.edge.invalid_at,
          created_at: input.now,
          expired_at: fact.expired_at,
          artifact_id: artifact.id,
          model_id: input.modelId
        }
      })
    }
    const insertedRows = yield* graph.insertEdges(inserts.map((i) => i.edge))
    inserts.forEach((i, n) => edgeIdOfFact.set(i.index, insertedRows[n]!.id))
    yield* graph.closeEdges(input.plan.closes)
    yield* graph.restartEdges(input.plan.restarts)
    // every closing decision, so a forget of either side can undo it (docs/FORGET.md)
    const storedFacts = new Map(input.candidates.facts.map((e) => [e.id, e] as const))
    yield* graph.recordClosures(input.plan.decisions.map((d) => {
      const born = d.kind === "born_closed"
      return {
        edge_id: born ? edgeIdOfFact.get(d.new_index)! : d.stored_id,
        by_edge_id: born ? d.stored_id : d.kind === "repeat_end" ? null : edgeIdOfFact.get(d.new_index)!,
        artifact_id: artifact.id,
        kind: d.kind,
        invalid_at: d.kind === "contradicts" ? null : d.invalid_at,
        expired_at: input.now,
        prev_invalid_at: born
          ? input.candidates.resolved[d.new_index]!.edge.invalid_at
          : storedFacts.get(d.stored_id)?.invalid_at ?? null,
        created_at: input.now
      }
    }))

    // a start made known or earlier decides again the decisions that fact took part in
    yield* settleRestarted(deps.forget, input.plan.restarts.map((r) => r.id))

    // Inserted edges and merged repeats are linked, with what this text stated of them;
    // contradicted edges are not.
    const edgeIds = [...new Set(edgeIdOfFact.values())]
    const statements = new Map<number, { description: string; valid_at: string | null; invalid_at: string | null }>()
    for (const fact of input.plan.facts) {
      const id = edgeIdOfFact.get(fact.index)!
      const stated = input.candidates.resolved[fact.index]!.edge
      if (!statements.has(id)) {
        statements.set(id, {
          description: stated.description,
          valid_at: stated.valid_at,
          invalid_at: stated.invalid_at
        })
      }
    }
    yield* graph.linkEdgeStatements(artifact.id, [...statements].map(([edge_id, s]) => ({ edge_id, ...s })))
    if (input.sessionId !== null) {
      yield* graph.linkEntitySessions(input.sessionId, [...entityIds])
      yield* graph.linkEdgeSessions(input.sessionId, edgeIds)
    }

    const edgeRows = new Map((yield* graph.getEdges(edgeIds)).map((e) => [e.id, e] as const))

    // The vectors go to the outbox in this transaction (or, for a store that shares it, to the
    // store itself): they cannot be lost once the rows exist.
    let outboxIds: ReadonlyArray<number> = []
    let embeddedEntities = 0
    let embeddedEdges = 0
    if (input.vectors !== null) {
      const items: Array<OutboxItem> = []
      const rowById = new Map(written.map((row) => [row.id, row] as const))
      const storedById = new Map(input.candidates.storedEntities.map((e) => [e.id, e] as const))
      const entityVectorIds = new Set<number>()
      for (const { ref, vector } of input.vectors.entities) {
        const id = "id" in ref ? ref.id : idByKey.get(ref.key)!
        if (entityVectorIds.has(id)) continue
        entityVectorIds.add(id)
        const row = rowById.get(id) ?? storedById.get(id)
        items.push({
          dataset_id: dataset.id,
          index_name: indexName(dataset.id, "entities"),
          vector_id: entityVectorId(id),
          values: vector,
          metadata: {
            dataset_id: dataset.id,
            kind: "entity",
            entity_id: id,
            name: row?.name ?? "",
            name_key: row?.name_key ?? "",
            type: row?.type ?? ""
          }
        })
      }
      const edgeVectorIds = new Set<number>()
      for (const { index, vector } of input.vectors.facts) {
        const id = edgeIdOfFact.get(index)!
        if (edgeVectorIds.has(id)) continue
        edgeVectorIds.add(id)
        items.push({
          dataset_id: dataset.id,
          index_name: indexName(dataset.id, "edges"),
          vector_id: edgeVectorId(id),
          values: vector,
          metadata: { dataset_id: dataset.id, kind: "edge", edge_id: id, relation: edgeRows.get(id)?.relation ?? "" }
        })
      }
      if (input.vectors.chunk !== null) {
        const index = input.metadata?.index
        items.push({
          dataset_id: dataset.id,
          index_name: indexName(dataset.id, "chunks"),
          vector_id: chunkVectorId(artifact.id),
          values: input.vectors.chunk,
          metadata: { dataset_id: dataset.id, kind: "chunk", artifact_id: artifact.id, index: Number(index ?? 0) }
        })
      }
      if (input.vectors.summary !== null && summary !== null) {
        items.push({
          dataset_id: dataset.id,
          index_name: indexName(dataset.id, "summaries"),
          vector_id: summaryVectorId(summary.id),
          values: input.vectors.summary,
          metadata: {
            dataset_id: dataset.id,
            kind: "summary",
            artifact_id: summary.id,
            chunk_artifact_id: artifact.id
          }
        })
      }
      outboxIds = yield* recordVectors(deps, items, input.now)
      yield* graph.markEmbedded([...entityVectorIds], [...edgeVectorIds], input.now)
      embeddedEntities = entityVectorIds.size
      embeddedEdges = edgeVectorIds.size
    }
    const textEntityIds = new Set(input.entities.map((e) => idByKey.get(entityKey(e.name_key, e.type))!))
    const stored: Stored = {
      dataset,
      artifact,
      parent,
      summary,
      entities: written.filter((row) => textEntityIds.has(row.id)),
      // two facts of one text can repeat the same stored edge: it is returned once
      edges: [...new Set(input.plan.facts.map((f) => edgeIdOfFact.get(f.index)!))].map((id) => edgeRows.get(id)!),
      invalidated: input.plan.invalidated,
      inserted: insertedRows.length,
      duplicates: input.plan.facts.length - insertedRows.length,
      outboxIds,
      embeddedEntities,
      embeddedEdges,
      embeddedChunks: input.vectors?.chunk != null ? 1 : 0,
      embeddedSummaries: input.vectors?.summary != null && summary !== null ? 1 : 0
    }
    return stored
  })

/** A unit as its store wrote it; `series`: what store_series wrote in the same transaction. */
export interface StoredText extends Stored {
  readonly series: ReadonlyArray<StoredSeries>
}

/** store for observers: what was written, in its stored state. */
const storedTrace = (s: Stored) => ({
  observation: {
    artifact_id: s.artifact.id,
    ...(s.parent === null ? {} : { parent_artifact_id: s.parent.id }),
    ...(s.summary === null ? {} : { summary_artifact_id: s.summary.id }),
    entities: s.entities.map((e) => ({ id: e.id, name: e.name, type: e.type })),
    edges: s.edges.map((e) => ({
      id: e.id,
      source: e.source_name,
      relation: e.relation,
      target: e.target_name,
      valid_at: e.valid_at,
      invalid_at: e.invalid_at,
      expired_at: e.expired_at
    })),
    inserted_edges: s.inserted,
    duplicate_edges: s.duplicates,
    invalidated_edges: s.invalidated
  }
})

/** What stage store writes for one unit: the unit, its model work and its reconciliation. */
export interface StoreUnitInput {
  readonly unit: Unit
  readonly work: UnitWork
  readonly candidates: Candidates
  readonly plan: ReconciliationPlan
  readonly now: string
  /** the run's cache with the unit's vectors embedded ahead */
  readonly cache: VectorCache
}

/**
 * Stage store for one unit. With `series` (the text's last unit, when the request has series)
 * store_series runs last in the same transaction, so its failure stores nothing of the text
 * either; that stage is recorded around store, so it has store's times.
 */
export const store = Effect.fn("remember.store")(
  function*(ctx: RunContext, input: StoreUnitInput, series: SeriesWrite | undefined) {
    const { deps, request } = ctx
    const { unit, work: { extraction, summary } } = input
    const isChunk = unit.chunk !== null
    const embedded = deps.embeddings.enabled
      ? prepareVectors(embedContext(ctx, "store"), input.cache, {
        entities: extraction.graph.entities,
        candidates: input.candidates,
        plan: input.plan,
        chunkText: isChunk ? unit.text : undefined,
        summaryText: summary?.text
      })
      : Effect.succeed(null)
    const write = (vectors: PreparedVectors | null) =>
      Effect.gen(function*() {
        const text = yield* writeText(deps, {
          userId: request.user_id,
          datasetName: request.dataset,
          dataset: ctx.dataset,
          kind: unit.kind,
          text: unit.text,
          parentId: unit.parentId,
          createParent: unit.createParent,
          summary: summary === null ? undefined : { text: summary.text, inferenceId: summary.response.inferenceId },
          sessionId: request.session_id ?? null,
          query: unit.query ?? null,
          metadata: unit.metadata ?? null,
          referenceTime: ctx.referenceTime,
          now: input.now,
          modelId: extraction.response.modelId,
          entities: extraction.graph.entities,
          candidates: input.candidates,
          plan: input.plan,
          vectors
        })
        const written = series === undefined ? [] : yield* storeTextSeries(deps, series, text)
        // a run taken over or retried goes on after the last chunk this commit stores
        if (unit.chunk !== null) {
          yield* deps.runLog.chunkStored(ctx.runId, text.parent?.id ?? unit.parentId!, unit.chunk.index + 1)
        }
        return { ...text, series: written } satisfies StoredText
      })
    const stored = ctx.recorder.stage(
      "store",
      // embedded before the transaction opens: a failure stores nothing, and no call runs inside it
      Effect.flatMap(embedded, (vectors) =>
        deps.database.withTransaction(write(vectors)).pipe(
          // the unit's statements as one span (each statement is a sql.execute span of @effect/sql)
          Effect.withSpan("sql.store", { attributes: { run_id: ctx.runId, dataset: request.dataset } })
        )),
      (s) => ({
        artifact_id: s.artifact.id,
        inserted_edges: s.inserted,
        duplicate_edges: s.duplicates,
        closed_edges: s.invalidated.length
      }),
      storedTrace
    )
    return yield* (series === undefined
      ? stored
      : ctx.recorder.stage("store_series", stored, (s) => seriesDetail(s.series)))
  }
)
