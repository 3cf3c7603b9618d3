import { Context, type Effect } from "effect"
import type { RememberError } from "../domain/Errors.js"
import type { RememberRequest } from "../domain/Remember.js"
import type { RememberOutcome } from "../domain/Responses.js"
import type { RunObserver } from "./RunObserver.js"

/**
 * Runs one remember request whose run-log row already exists (the manager created it and
 * holds the dataset lock and a permit). Reports its stages to the run log itself; the
 * manager records the run's final status. An observer (eval mode) hears the same stage and
 * model-call reports as the run log.
 */
export class RememberPipeline extends Context.Tag("gligabao/RememberPipeline")<
  RememberPipeline,
  {
    readonly run: (
      runId: number,
      request: RememberRequest,
      observer?: RunObserver
    ) => Effect.Effect<RememberOutcome, RememberError>
  }
>() {}
