/**
 * A dataset's schema (docs/SCHEMA.md): read it, set it. Setting one creates the dataset when it
 * is not there yet (as a first remember would), and applies to the remembers that start after it:
 * the stored graph is not rewritten. An empty schema is stored as none.
 */
import { Clock, Effect, Option } from "effect"
import { type DatasetSchema, normalizeSchema, schemaToStore, storedSchemaOf } from "../domain/DatasetSchema.js"
import { toIso } from "../domain/time.js"
import type { ReadDeps } from "./deps.js"
import type { ReadScope } from "./requests.js"

/** The dataset's schema; the empty one when it has none or does not exist yet. */
export const runGetSchema = (deps: ReadDeps, scope: ReadScope): Effect.Effect<DatasetSchema> =>
  Effect.map(
    deps.datasets.findWithSchema(scope.user_id, scope.dataset),
    (found) => storedSchemaOf(Option.getOrNull(found)?.schema)
  )

/** Stores `schema` (names normalized) on the dataset, creating it if needed, and answers it as stored. */
export const runSetSchema = (deps: ReadDeps, scope: ReadScope, schema: DatasetSchema): Effect.Effect<DatasetSchema> =>
  Effect.gen(function*() {
    const normalized = normalizeSchema(schema)
    const now = toIso(yield* Clock.currentTimeMillis)
    yield* deps.datasets.setSchema(scope.user_id, scope.dataset, schemaToStore(normalized), now)
    return normalized
  })
