import { Context, type Effect } from "effect"
import type { InferenceInput, InferenceRow, ModelRow } from "../domain/Rows.js"

/** gb_inferences and gb_models: every model call, successful or not, and the models seen. */
export class InferencesRepo extends Context.Tag("gligabao/InferencesRepo")<
  InferencesRepo,
  {
    /** get or insert on (provider, name) */
    readonly registerModel: (provider: string, name: string, now: string) => Effect.Effect<ModelRow>
    /** registers the model and inserts the row */
    readonly record: (inference: InferenceInput) => Effect.Effect<InferenceRow>
    readonly listByRun: (runId: number) => Effect.Effect<ReadonlyArray<InferenceRow>>
  }
>() {}
