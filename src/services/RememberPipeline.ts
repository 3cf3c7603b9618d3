import { Context, type Effect, type Scope } from "effect"
import type { InvalidRequest, RememberError, ServiceUnavailable } from "../domain/Errors.js"
import type { RememberRequest } from "../domain/Remember.js"
import type { RememberOutcome } from "../domain/Responses.js"
import type { RunObserver } from "./RunObserver.js"

/** A run whose dataset-independent work is under way (`prepare`); `apply` does the rest in order. */
export interface PreparedRun {
  /**
   * the run's reads and writes of its dataset (the similarity lookup, candidates,
   * resolve_edges, the store) and what follows them; the manager runs it under the dataset's
   * lock, in submission order
   */
  readonly apply: Effect.Effect<RememberOutcome, RememberError>
}

/**
 * Runs one remember request whose run-log row already exists (the manager created and took
 * it). Reports its stages to the run log itself; the manager records the run's final status.
 * An observer (eval mode) hears the same stage and model-call reports as the run log.
 */
export class RememberPipeline extends Context.Tag("gligabao/RememberPipeline")<
  RememberPipeline,
  {
    /**
     * What this server cannot do for `request` at all (no LLM configured), known before any
     * work: the manager refuses the request before it is queued, so nothing is stored or
     * queued. Absent: nothing is refused.
     */
    readonly refusal?: (request: RememberRequest) => ServiceUnavailable | InvalidRequest | undefined
    /** the whole run (the manager holds the dataset lock and a permit) */
    readonly run: (
      runId: number,
      request: RememberRequest,
      observer?: RunObserver
    ) => Effect.Effect<RememberOutcome, RememberError>
    /**
     * The run in two phases (docs/INGESTION.md, Order and concurrency): `prepare` does the
     * work that reads and writes no dataset (a text's classification, chunking, extraction,
     * chunk summaries, the embeddings ahead) and may run while earlier runs of the dataset
     * still hold its lock; its background work lives in the given scope, which must stay open
     * until `apply` has ended. A failure in `prepare` fails this run only, with nothing stored.
     * Optional: a pipeline without it runs whole under the lock.
     */
    readonly prepare?: (
      runId: number,
      request: RememberRequest,
      observer?: RunObserver
    ) => Effect.Effect<PreparedRun, RememberError, Scope.Scope>
  }
>() {}
