/**
 * A fact's view (`GET /v1/gb/facts/{id}`, and the admin UI's Memory view): the fact as an
 * entity's story shows it, the artifact that created it, every other artifact that restated it
 * (each with what it stated), and the recorded decisions that closed it (docs/FORGET.md). All
 * read through indexes only: the fact by primary key (and its link tables by theirs), its sources
 * by (edge_id, artifact_id), its closures by edge_id; texts are cut in SQL, so a long document is
 * never read whole.
 */
import { Effect, Option } from "effect"
import { InvalidRequest, NotFound } from "../domain/Errors.js"
import { userMetadataOf } from "../domain/Metadata.js"
import { instant } from "../kernel/temporal.js"
import type { FactClosureRow, FactSourceRow } from "../services/SearchRepo.js"
import { findDataset, type ReadDeps } from "./deps.js"
import { storyFactOut } from "./entity.js"
import type { FactViewRequest } from "./requests.js"
import type { FactClosure, FactSource, FactView } from "./responses.js"

export type { ArtifactExcerpt, FactClosure, FactSource, FactStatement, FactView } from "./responses.js"

export type FactViewError = InvalidRequest | NotFound

/** The most characters (code points) of an artifact's text a fact view shows. */
export const MAX_EXCERPT_CHARS = 280

/** The text's first MAX_EXCERPT_CHARS code points; a longer one keeps one less and ends with an ellipsis. */
export const excerptOf = (text: string): string => {
  const points = Array.from(text)
  return points.length <= MAX_EXCERPT_CHARS ? text : `${points.slice(0, MAX_EXCERPT_CHARS - 1).join("")}…`
}

/** The caller's metadata of a source, when it has any. */
const metadataOut = (metadata: FactSourceRow["metadata"]) => {
  const mine = userMetadataOf(metadata)
  return Object.keys(mine).length === 0 ? {} : { metadata: mine }
}

const sourceOut = (row: FactSourceRow): FactSource => ({
  id: row.id,
  kind: row.kind,
  valid_at: row.valid_at,
  created_at: row.created_at,
  excerpt: excerptOf(row.text),
  ...metadataOut(row.metadata),
  // a link recorded before migration 0009 has no statement; a statement's valid_at is null when
  // it gave an end and no start, so only the description tells the two apart
  ...(row.statement_description === null ? {} : {
    statement: {
      description: row.statement_description,
      valid_at: row.statement_valid_at,
      ...(row.statement_invalid_at === null ? {} : { invalid_at: row.statement_invalid_at })
    }
  })
})

const closureOut = (row: FactClosureRow): FactClosure => ({
  kind: row.kind,
  ...(row.by_edge_id === null ? {} : { by_fact: { id: row.by_edge_id, description: row.by_description ?? "" } }),
  ...(row.artifact_id === null ? {} : { artifact: { id: row.artifact_id } }),
  invalid_at: row.invalid_at,
  at: row.created_at
})

/**
 * The decisions in the order the view lists them: the earliest (by when it was decided) of
 * those whose end is the fact's current invalid_at first, the one that holds it there; then
 * the others as decided. Rows come by created_at then id.
 */
const closuresInOrder = (
  rows: ReadonlyArray<FactClosureRow>,
  invalidAt: string | null
): ReadonlyArray<FactClosureRow> => {
  const current = invalidAt === null ? -1 : rows.findIndex((r) => instant(r.invalid_at) === instant(invalidAt))
  return current <= 0 ? rows : [rows[current]!, ...rows.slice(0, current), ...rows.slice(current + 1)]
}

/**
 * The view of the request's fact. NotFound (404) when the user has no such dataset, or the
 * dataset no such fact (another user's fact is missing like any other); InvalidRequest (400)
 * when the request, built without its schema, has no positive integer id.
 */
export const runFactView = (
  deps: ReadDeps,
  request: FactViewRequest
): Effect.Effect<FactView, FactViewError> =>
  Effect.gen(function*() {
    if (!Number.isSafeInteger(request.id) || request.id < 1) {
      return yield* new InvalidRequest({ message: "id must be a positive integer" })
    }
    const dataset = yield* findDataset(deps, request)
    const found = yield* deps.search.factById(dataset.id, request.id)
    if (Option.isNone(found)) return yield* new NotFound({ message: `fact ${request.id} not found` })
    const fact = found.value
    // a live fact (not superseded) has nothing that closed it, whatever end its own statement gave
    const [sources, closures] = yield* Effect.all([
      deps.search.factSources(dataset.id, fact, MAX_EXCERPT_CHARS + 1),
      fact.expired_at === null ? Effect.succeed([]) : deps.search.factClosures(fact.id)
    ])
    const creator = sources.find((s) => s.id === fact.artifact_id)
    return {
      fact: storyFactOut(fact),
      ...(creator === undefined ? {} : { created_by: sourceOut(creator) }),
      restated_by: sources.filter((s) => s !== creator).map(sourceOut),
      closed_by: closuresInOrder(closures, fact.invalid_at).map(closureOut)
    }
  })
