/**
 * The admin API's programs: what each endpoint answers, over the named database.
 */
import { Effect, Option } from "effect"
import { NotFound } from "../domain/Errors.js"
import type { RunWithStages } from "../domain/Rows.js"
import { runView } from "../domain/runView.js"
import { IMAGE_STAGES, TEXT_STAGES } from "../domain/Stages.js"
import { type AdminDatabase, findDatabase } from "./AdminDatabases.js"
import type { AdminGraphRequest, DatasetsRequest, RunRequest, RunsRequest, UsageRequest } from "./requests.js"
import type {
  AdminDatabasesResponse,
  AdminDatasetsResponse,
  AdminGraphResponse,
  AdminRunResponse,
  AdminRunsResponse,
  AdminRunView,
  AdminUsageResponse
} from "./responses.js"

/** Every stage name, in pipeline order: the text pipeline's, then the image pipeline's. */
export const ALL_STAGES: ReadonlyArray<string> = [...TEXT_STAGES, ...IMAGE_STAGES]

/** A call that succeeded although one of its stages failed (an enrichment, a vector write). */
export const isFlagged = (run: RunWithStages): boolean =>
  run.status === "succeeded" && run.stages.some((stage) => stage.status === "failed")

const adminRunView = (run: RunWithStages): AdminRunView => ({ ...runView(run), flagged: isFlagged(run) })

export const listDatabases = (databases: ReadonlyArray<AdminDatabase>): AdminDatabasesResponse => ({
  databases: databases.map(({ dialect, name, primary }) => ({ name, dialect, primary }))
})

export const listRuns = (
  databases: ReadonlyArray<AdminDatabase>,
  request: RunsRequest
): Effect.Effect<AdminRunsResponse, NotFound> =>
  Effect.gen(function*() {
    const db = yield* findDatabase(databases, request.db)
    const [counts, page] = yield* Effect.all([
      db.runLog.counts(),
      db.runLog.list({
        status: request.status,
        dataset: request.dataset,
        user_id: request.user_id,
        limit: request.limit,
        offset: request.offset
      })
    ], { concurrency: 2 })
    return {
      counts,
      stages: ALL_STAGES,
      runs: page.runs.map(adminRunView),
      total: page.total,
      limit: request.limit,
      offset: request.offset
    }
  })

/** One run with its model calls (any status; the page follows a run that left the list's filter). */
export const getRun = (
  databases: ReadonlyArray<AdminDatabase>,
  request: RunRequest
): Effect.Effect<AdminRunResponse, NotFound> =>
  Effect.gen(function*() {
    const db = yield* findDatabase(databases, request.db)
    const run = yield* db.runLog.get(request.id)
    if (Option.isNone(run)) {
      return yield* Effect.fail(
        new NotFound({ message: `no remember run with id ${request.id} in database ${JSON.stringify(request.db)}` })
      )
    }
    const inferences = yield* db.inferences.listByRun(request.id)
    return { run: adminRunView(run.value), inferences }
  })

export const inferenceUsage = (
  databases: ReadonlyArray<AdminDatabase>,
  request: UsageRequest
): Effect.Effect<AdminUsageResponse, NotFound> =>
  Effect.gen(function*() {
    const db = yield* findDatabase(databases, request.db)
    const usage = yield* db.admin.inferenceUsage({ from: request.from, to: request.to, bucket: request.bucket })
    return { from: request.from, to: request.to, bucket: request.bucket, ...usage }
  })

export const listAllDatasets = (
  databases: ReadonlyArray<AdminDatabase>,
  request: DatasetsRequest
): Effect.Effect<AdminDatasetsResponse, NotFound> =>
  Effect.gen(function*() {
    const db = yield* findDatabase(databases, request.db)
    const page = yield* db.admin.datasets({ limit: request.limit, offset: request.offset })
    return { ...page, limit: request.limit, offset: request.offset }
  })

export const datasetGraph = (
  databases: ReadonlyArray<AdminDatabase>,
  request: AdminGraphRequest
): Effect.Effect<AdminGraphResponse, NotFound> =>
  Effect.gen(function*() {
    const db = yield* findDatabase(databases, request.db)
    const graph = yield* db.admin.graph(request.dataset_id, request.limit)
    return yield* Option.match(graph, {
      onNone: () =>
        Effect.fail(
          new NotFound({
            message: `no dataset with id ${request.dataset_id} in database ${JSON.stringify(request.db)}`
          })
        ),
      onSome: Effect.succeed
    })
  })
