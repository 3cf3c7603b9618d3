// Legacy copy of the read path as of 534360b (issue 38, item 7): test/query/readEquivalence.test.ts
// runs it beside the new one. Deleted once the comparison has passed.
/**
 * A user's datasets (with counts), their soft delete, and a dataset's sessions (with counts).
 * A deleted dataset's rows, vectors and image files stay; its name is free again, so the next
 * remember to it starts a fresh dataset (a new id, new vector indexes).
 */
import { Clock, Effect } from "effect"
import { NotFound } from "../../../src/domain/Errors.js"
import { toIso } from "../../../src/domain/time.js"
import type { ReadScope } from "../../../src/query/requests.js"
import type { DatasetsResponse, DeletedDataset, SessionsResponse } from "../../../src/query/responses.js"
import { findDataset, type ReadDeps } from "./deps.js"

export type { DatasetOut, DatasetsResponse, DeletedDataset, SessionsResponse } from "../../../src/query/responses.js"

export const runListDatasets = (deps: ReadDeps, userId: string): Effect.Effect<DatasetsResponse> =>
  Effect.map(deps.datasets.list(userId), (rows) => ({
    datasets: rows.map((d) => ({
      id: d.id,
      name: d.name,
      created_at: d.created_at,
      artifacts: Number(d.artifacts),
      entities: Number(d.entities),
      edges: Number(d.edges),
      live_edges: Number(d.live_edges)
    }))
  }))

/** Soft delete; NotFound when the user has no live dataset of that name. */
export const runDeleteDataset = (deps: ReadDeps, scope: ReadScope): Effect.Effect<DeletedDataset, NotFound> =>
  Effect.gen(function*() {
    const dataset = yield* findDataset(deps, scope)
    const now = toIso(yield* Clock.currentTimeMillis)
    const deleted = yield* deps.datasets.softDelete(scope.user_id, scope.dataset, now)
    // a concurrent delete got there first
    if (!deleted) return yield* new NotFound({ message: `no dataset ${JSON.stringify(scope.dataset)} for this user` })
    return { dataset: dataset.name, id: dataset.id, deleted_at: now }
  })

export const runListSessions = (deps: ReadDeps, scope: ReadScope): Effect.Effect<SessionsResponse, NotFound> =>
  Effect.gen(function*() {
    const dataset = yield* findDataset(deps, scope)
    return { dataset: dataset.name, sessions: yield* deps.search.sessions(dataset.id) }
  })
