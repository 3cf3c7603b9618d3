/** The forget endpoints' request and response schemas (docs/FORGET.md). */
import { Schema } from "effect"
import { Edge, Entity } from "../domain/Responses.js"
import {
  ArrayWithin,
  Dataset,
  DEFAULT_DATASET,
  documented,
  ExactlyOneOf,
  IntegerIn,
  optional,
  required,
  Rfc3339,
  STRICT,
  UserId,
  withDefault
} from "../domain/Wire.js"

const count = (description: string) => Schema.Number.annotations({ description })

/** `DELETE /v1/gb/artifacts/{id}`: what the forget did. */
export const ForgetArtifactResponse = Schema.Struct({
  deleted: Schema.Struct({
    artifacts: count("the artifact and everything derived from it (chunks, summaries, web results, observations)"),
    entities: count("entities no remaining artifact or fact supports"),
    facts: count("facts no remaining artifact supports, and repeats merged once reopened"),
    vectors: count("vector deletes queued in the outbox (and the rewritten rows' old vectors)")
  }),
  reopened_facts: Schema.Array(Schema.Number).annotations({
    description: "facts the forgotten ones had closed, open again (or closed by the earliest remaining decision)"
  }),
  reanchored_facts: Schema.Array(Schema.Number).annotations({
    description: "facts still supported by another artifact, now anchored to the oldest remaining supporter"
  }),
  vectors_pending: Schema.optional(count(
    "vector deletes the vector store did not take yet: they stay in the outbox and converge with the next write"
  ))
}).annotations({
  identifier: "ForgetArtifactResponse",
  examples: [{
    deleted: { artifacts: 1, entities: 1, facts: 2, vectors: 3 },
    reopened_facts: [12],
    reanchored_facts: []
  }]
})
export type ForgetArtifactResponse = Schema.Schema.Type<typeof ForgetArtifactResponse>

/** `DELETE /v1/gb/facts/{id}` and `DELETE /v1/gb/entities/{id}` answer what the forget did, as for an artifact. */
export const ForgetResponse = ForgetArtifactResponse

const scope = {
  user_id: required(documented(UserId, "the owner of the dataset")),
  dataset: withDefault(documented(Dataset, "the dataset (default main)"), () => DEFAULT_DATASET)
}

/** `POST /v1/gb/facts/{id}/invalidate`: close a live fact by hand, at `invalid_at` (default now). */
export const InvalidateFactRequest = Schema.Struct({
  ...scope,
  invalid_at: optional(documented(Rfc3339, "when the fact stopped being true (default now); after its valid_at"))
}).annotations({ ...STRICT, examples: [{ user_id: "alice", dataset: "main" }] })
export type InvalidateFactRequest = Schema.Schema.Type<typeof InvalidateFactRequest>

/** `POST /v1/gb/facts/{id}/reopen`: undo a closing by hand. */
export const ReopenFactRequest = Schema.Struct(scope).annotations({
  ...STRICT,
  examples: [{ user_id: "alice", dataset: "main" }]
})
export type ReopenFactRequest = Schema.Schema.Type<typeof ReopenFactRequest>

/** The fact as it is after a correction. */
export const FactResponse = Schema.Struct({ fact: Edge }).annotations({ identifier: "FactResponse" })
export type FactResponse = Schema.Schema.Type<typeof FactResponse>

const EntityId = IntegerIn(1, Number.MAX_SAFE_INTEGER)

/** `POST /v1/gb/entities/merge`: `from` becomes `into`. */
export const MergeEntitiesRequest = Schema.Struct({
  ...scope,
  into: required(documented(EntityId, "the entity that stays")),
  from: required(documented(
    ArrayWithin(EntityId, {
      notArray: "must be an array of entity ids",
      min: 1,
      max: 100,
      length: (n) => (n === 0 ? "must not be empty" : n > 100 ? "must have at most 100 ids" : undefined)
    }),
    "the entities merged into `into` and then deleted (1 to 100, distinct, not `into`)"
  ))
}).annotations({ ...STRICT, examples: [{ user_id: "alice", dataset: "main", into: 1, from: [2] }] })
export type MergeEntitiesRequest = Schema.Schema.Type<typeof MergeEntitiesRequest>

/** What MCP's `correct` tool does: one tool over the correction programs, `action` says which. */
export const CORRECT_ACTIONS = ["close", "reopen", "delete_fact", "delete_entity", "merge"] as const
export type CorrectAction = (typeof CORRECT_ACTIONS)[number]

/**
 * MCP's `correct` tool: the HTTP corrections' fields under one `action` (close = invalidate).
 * `id` is the fact's (close, reopen, delete_fact) or the entity's (delete_entity); merge takes
 * `into` and `from`, as `POST /v1/gb/entities/merge`.
 */
export const CorrectRequest = Schema.Struct({
  ...scope,
  action: required(documented(
    ExactlyOneOf(CORRECT_ACTIONS),
    "close a fact that stopped being true, reopen a closed one, delete a fact or an entity, or merge entities"
  )),
  id: optional(documented(EntityId, "the fact (close, reopen, delete_fact) or the entity (delete_entity)")),
  invalid_at: InvalidateFactRequest.fields.invalid_at,
  into: optional(MergeEntitiesRequest.fields.into.from),
  from: optional(MergeEntitiesRequest.fields.from.from)
}).annotations({ ...STRICT, examples: [{ user_id: "alice", dataset: "main", action: "close", id: 12 }] })
export type CorrectRequest = Schema.Schema.Type<typeof CorrectRequest>

export const MergeEntitiesResponse = Schema.Struct({
  into: Entity,
  merged: Schema.Array(Schema.Number).annotations({ description: "the ids merged and deleted" }),
  moved_facts: Schema.Number.annotations({ description: "facts whose endpoint moved to `into`" }),
  merged_facts: Schema.Array(Schema.Number).annotations({
    description: "facts that became exact repeats and were merged into the earlier one (their provenance united)"
  })
}).annotations({ identifier: "MergeEntitiesResponse" })
export type MergeEntitiesResponse = Schema.Schema.Type<typeof MergeEntitiesResponse>
const erased = Schema.Struct({
  datasets: count("dataset rows of the name, soft-deleted ones included"),
  artifacts: count("artifacts: texts, chunks, summaries, web results, observations"),
  entities: count("entities"),
  facts: count("facts, live and closed"),
  vectors: count("vector deletes queued in the outbox: embedded entities and facts, every chunk and summary"),
  images: count("image artifacts, and their files"),
  runs: count("remember runs, with their stages, queued requests and Idempotency-Keys")
})

const vectorsPending = Schema.optional(count(
  "vector deletes the vector store did not take yet: they stay in the outbox and converge with the next write"
))

/** `DELETE /v1/gb/users/{user_id}`: everything of the user that went. */
export const ForgetUserResponse = Schema.Struct({
  user_id: Schema.String,
  deleted: erased,
  vectors_pending: vectorsPending
}).annotations({
  identifier: "ForgetUserResponse",
  examples: [{
    user_id: "alice",
    deleted: { datasets: 2, artifacts: 14, entities: 9, facts: 11, vectors: 20, images: 1, runs: 12 }
  }]
})
export type ForgetUserResponse = Schema.Schema.Type<typeof ForgetUserResponse>

/** `DELETE /v1/gb/datasets/{name}?hard=true`: the dataset's rows (every one of that name) and what was in them. */
export const HardDeletedDataset = Schema.Struct({
  user_id: Schema.String,
  dataset: Schema.String,
  dataset_ids: Schema.Array(Schema.Number).annotations({
    description: "the ids the name had: the live dataset and the soft-deleted ones"
  }),
  deleted: erased,
  vectors_pending: vectorsPending
}).annotations({
  identifier: "HardDeletedDataset",
  examples: [{
    user_id: "alice",
    dataset: "main",
    dataset_ids: [1],
    deleted: { datasets: 1, artifacts: 3, entities: 4, facts: 2, vectors: 6, images: 0, runs: 3 }
  }]
})
export type HardDeletedDataset = Schema.Schema.Type<typeof HardDeletedDataset>

/** `DELETE /v1/gb/images/{id}`: an image artifact forgotten (it adds no entities or facts to the graph). */
export const ForgetImageResponse = Schema.Struct({
  image_artifact_id: Schema.Number,
  deleted: Schema.Struct({
    images: count("the image artifact with its extractions and text blocks"),
    files: count("the stored image file (0 when it could not be removed: logged)")
  })
}).annotations({
  identifier: "ForgetImageResponse",
  examples: [{ image_artifact_id: 1, deleted: { images: 1, files: 1 } }]
})
export type ForgetImageResponse = Schema.Schema.Type<typeof ForgetImageResponse>

/** What `correct` answers: the fact as it now stands, what a delete removed, or the merge. */
export const CorrectResponse = Schema.Union(FactResponse, ForgetArtifactResponse, MergeEntitiesResponse)
export type CorrectResponse = Schema.Schema.Type<typeof CorrectResponse>
