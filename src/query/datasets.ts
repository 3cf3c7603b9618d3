/**
 * A user's datasets (with counts), their soft delete, and a dataset's sessions (with counts).
 * A deleted dataset's rows, vectors and image files stay; its name is free again, so the next
 * remember to it starts a fresh dataset (a new id, new vector indexes).
 */
import { Clock, Effect, Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import { toIso } from "../domain/time.js"
import { datasetOf, findDataset, type ReadDeps } from "./deps.js"
import type { ReadScope } from "./requests.js"
import type { DatasetsResponse, DeletedDataset, SessionsResponse } from "./responses.js"

export type { DatasetOut, DatasetsResponse, DeletedDataset, SessionsResponse } from "./responses.js"

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

/** A dataset's sessions; none when the user has stored nothing in it yet. */
export const runListSessions = (deps: ReadDeps, scope: ReadScope): Effect.Effect<SessionsResponse> =>
  Effect.gen(function*() {
    const found = yield* datasetOf(deps, scope)
    if (Option.isNone(found)) return { dataset: scope.dataset, sessions: [] }
    return { dataset: found.value.name, sessions: yield* deps.search.sessions(found.value.id) }
  })
