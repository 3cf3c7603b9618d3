/**
 * Embedding within a remember: what is embedded (seed: Embed), one request per unit, and a
 * per-run cache so a text embedded for the similarity lookup is not paid for again at store.
 */
import { Effect } from "effect"
import { EmbeddingFailed } from "../../domain/Errors.js"
import type { EntityRow } from "../../domain/Rows.js"
import { entityKey, type NormalizedEntity } from "../../kernel/normalize.js"
import type { ReconciliationPlan } from "../../kernel/temporal.js"
import { callEmbeddings, type EmbedContext } from "../ModelCalls.js"
import { entityText } from "../vectors.js"
import { type Candidates, type Endpoint, foundVia } from "./candidates.js"

/** text -> vector, for one run: what one unit's similarity lookup embedded, its store reuses. */
export interface VectorCache {
  readonly get: (text: string) => ReadonlyArray<number> | undefined
  readonly set: (text: string, vector: ReadonlyArray<number>) => void
}

/**
 * At most `capacity` vectors, the oldest dropped first. A unit needs its own texts back only
 * (lookup, then store), so a long document does not keep every vector it made (BENCHMARKS.md,
 * memory).
 */
export const vectorCache = (capacity = 512): VectorCache => {
  const vectors = new Map<string, ReadonlyArray<number>>()
  return {
    get: (text) => vectors.get(text),
    set: (text, vector) => {
      vectors.delete(text)
      vectors.set(text, vector)
      if (vectors.size > capacity) vectors.delete(vectors.keys().next().value!)
    }
  }
}

/** Embeds the texts not in the cache, in one request (none if all are cached), in input order. */
export const embedTexts = (
  ctx: EmbedContext,
  cache: VectorCache,
  texts: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, EmbeddingFailed> =>
  Effect.gen(function*() {
    // read the hits first: adding this request's vectors may evict older entries
    const known = new Map<string, ReadonlyArray<number>>()
    for (const text of texts) {
      const hit = cache.get(text)
      if (hit !== undefined) known.set(text, hit)
    }
    const missing = [...new Set(texts.filter((t) => !known.has(t)))]
    if (missing.length > 0) {
      const batch = yield* callEmbeddings(ctx, missing)
      if (batch.vectors.length !== missing.length) {
        return yield* new EmbeddingFailed({
          message: `the embeddings provider returned ${batch.vectors.length} vectors for ${missing.length} texts`
        })
      }
      missing.forEach((text, i) => {
        known.set(text, batch.vectors[i]!)
        cache.set(text, batch.vectors[i]!)
      })
    }
    return texts.map((t) => known.get(t)!)
  })

/** Which entity a vector belongs to: a stored row, or an entity this call writes (by key). */
export type EntityRef = { readonly id: number } | { readonly key: string }

export interface PreparedVectors {
  readonly entities: ReadonlyArray<{ readonly ref: EntityRef; readonly vector: ReadonlyArray<number> }>
  /** by fact index; a repeated fact is embedded under the stored edge's id */
  readonly facts: ReadonlyArray<{ readonly index: number; readonly vector: ReadonlyArray<number> }>
  /** a chunk of a longer text: its own text, and its summary */
  readonly chunk: ReadonlyArray<number> | null
  readonly summary: ReadonlyArray<number> | null
}

/**
 * The entities a unit's vectors are written for, each as the row will read after the store:
 * the entities the text mentions (its own, the stored ones its facts name, the `other`
 * endpoints), each as the stored name and type with the description the upsert keeps. It
 * depends on the candidates only, not on resolve_edges' plan.
 */
const entityVectorTexts = (
  entities: ReadonlyArray<NormalizedEntity>,
  candidates: Candidates
): ReadonlyArray<{ readonly ref: EntityRef; readonly text: string }> => {
  const stored = new Map(candidates.storedEntities.map((e) => [entityKey(e.name_key, e.type), e] as const))
  const storedById = new Map(candidates.storedEntities.map((e) => [e.id, e] as const))
  const entityTexts = new Map<string, { readonly ref: EntityRef; readonly text: string }>()
  const addWritten = (e: NormalizedEntity) => {
    const key = entityKey(e.name_key, e.type)
    const row = stored.get(key)
    const ref: EntityRef = row === undefined ? { key } : { id: row.id }
    const refKey = row === undefined ? `key:${key}` : `id:${row.id}`
    if (entityTexts.has(refKey)) return
    const view = row === undefined ? e : { ...row, description: e.description !== "" ? e.description : row.description }
    entityTexts.set(refKey, { ref, text: entityText(view) })
  }
  const addStored = (row: EntityRow) => {
    if (!entityTexts.has(`id:${row.id}`)) {
      entityTexts.set(`id:${row.id}`, { ref: { id: row.id }, text: entityText(row) })
    }
  }
  for (const e of [...entities, ...candidates.endpointEntities]) addWritten(e)
  const endpoint = (p: Endpoint) => {
    if (p.kind === "written") addWritten(p.entity)
    else {
      const row = storedById.get(p.id)
      if (row !== undefined) addStored(row)
    }
  }
  for (const r of candidates.resolved) {
    endpoint(r.source)
    endpoint(r.target)
  }
  return [...entityTexts.values()]
}

/**
 * The texts `prepareVectors` will most likely need once resolve_edges has answered, known as
 * soon as the candidates are: the entities' (exact), the new facts' descriptions, and the
 * stored wording of every candidate fact with the relation of a new fact between the same two
 * stored entities, either way round (an exact repeat, or what the model will most likely call
 * a duplicate: a repeat is embedded with the stored edge's description). Embedding them while
 * resolve_edges runs takes the store's embeddings round trip off a dataset's ordered path
 * (BENCHMARKS.md, one dataset); a duplicate the model finds elsewhere is embedded by the store
 * as before, so the vectors are the same either way.
 */
export const likelyStoreTexts = (
  entities: ReadonlyArray<NormalizedEntity>,
  candidates: Candidates
): ReadonlyArray<string> => {
  const between = (a: number, b: number, relation: string) => JSON.stringify([Math.min(a, b), Math.max(a, b), relation])
  const facts = new Set<string>()
  for (const r of candidates.resolved) {
    if (r.source.kind === "stored" && r.target.kind === "stored") {
      facts.add(between(r.source.id, r.target.id, r.edge.relation))
    }
  }
  const repeated = candidates.facts.filter((f) => facts.has(between(f.source_id, f.target_id, f.relation)))
  return [
    ...new Set([
      ...entityVectorTexts(entities, candidates).map((e) => e.text),
      ...candidates.resolved.map((r) => r.edge.description),
      ...repeated.map((f) => f.description)
    ])
  ]
}

/**
 * The texts a unit embeds, as the rows will read after the store: the entities
 * (`entityVectorTexts`), then the facts it states (a repeat with the stored edge's
 * description). Entities first, then edges (seed order). A duplicate of a stored fact found by
 * its meaning (`similar_fact`) has its vector in the edge index already (that is how it was
 * found), under the stored wording, which a duplicate keeps: unless that wording is in the
 * cache anyway, it is not embedded again, so finding candidates by meaning costs no
 * embeddings request.
 */
export const prepareVectors = (
  ctx: EmbedContext,
  cache: VectorCache,
  input: {
    readonly entities: ReadonlyArray<NormalizedEntity>
    readonly candidates: Candidates
    readonly plan: ReconciliationPlan
    /** a chunk's text and summary, embedded in the same request, after the edges */
    readonly chunkText?: string | undefined
    readonly summaryText?: string | undefined
  }
): Effect.Effect<PreparedVectors, EmbeddingFailed> => {
  const entityList = entityVectorTexts(input.entities, input.candidates)
  const factById = new Map(input.candidates.facts.map((f) => [f.id, f] as const))
  const factTexts = input.plan.facts.flatMap((fact) => {
    if (fact.action !== "duplicate") {
      return [{ index: fact.index, text: input.candidates.resolved[fact.index]!.edge.description }]
    }
    const stored = factById.get(fact.edge_id)
    const text = stored?.description ?? input.candidates.resolved[fact.index]!.edge.description
    const inIndex = stored !== undefined && foundVia(input.candidates.foundBy.get(stored.id), "similar_fact")
    return inIndex && cache.get(text) === undefined ? [] : [{ index: fact.index, text }]
  })
  const extra = [input.chunkText, input.summaryText].filter((t): t is string => t !== undefined)
  const texts = [...entityList.map((e) => e.text), ...factTexts.map((f) => f.text), ...extra]
  return Effect.map(embedTexts(ctx, cache, texts), (vectors) => {
    const at = entityList.length + factTexts.length
    return {
      entities: entityList.map((e, i) => ({ ref: e.ref, vector: vectors[i]! })),
      facts: factTexts.map((f, i) => ({ index: f.index, vector: vectors[entityList.length + i]! })),
      chunk: input.chunkText === undefined ? null : vectors[at]!,
      summary: input.summaryText === undefined ? null : vectors[at + (input.chunkText === undefined ? 0 : 1)]!
    }
  })
}
