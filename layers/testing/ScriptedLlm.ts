import { Context, Effect, Layer } from "effect"
import { LlmFailed, LlmUnavailable } from "../../src/domain/Errors.js"
import type { ReasoningLevel } from "../../src/domain/Stages.js"
import { Llm, type LlmRequest, type LlmResponse, type LlmUsage } from "../../src/services/Llm.js"

/** One scripted reply: an answer (defaults filled in) or a failure. */
export type ScriptedAnswer =
  | {
    readonly text: string
    /** default: the requested model, else the default model */
    readonly model?: string
    /** default: end_turn */
    readonly stopReason?: string
    /** default: the requested level */
    readonly reasoning?: ReasoningLevel
    /** missing fields are 0 */
    readonly usage?: Partial<LlmUsage>
    /** default: one text block */
    readonly blocks?: ReadonlyArray<unknown>
  }
  | {
    /**
     * an LlmFailed / LlmUnavailable as is, or the fields of an LlmFailed (the stage is filled
     * in); `retryable: true` is a transient failure, after which the manager runs the run again
     */
    readonly fail:
      | LlmFailed
      | LlmUnavailable
      | { readonly message: string; readonly status?: number; readonly retryable?: boolean }
  }

/**
 * Either a function of the request and the 0-based index of the call, or a queue of
 * answers per stage (`{ extract_graph: [a, b], resolve_edges: [c] }`) consumed in order.
 */
export type LlmScript =
  | ((request: LlmRequest, callIndex: number) => ScriptedAnswer)
  | { readonly [stage: string]: ReadonlyArray<ScriptedAnswer> }

export interface ScriptedLlmOptions {
  readonly provider?: string
  readonly defaultModel?: string
}

/**
 * A deterministic Llm for tests. Its own tag exposes the requests it received, so a
 * test can assert what the pipeline sent: `(yield* ScriptedLlm).calls`.
 */
export class ScriptedLlm extends Context.Tag("gligabao/testing/ScriptedLlm")<
  ScriptedLlm,
  {
    /** every request received, in order (failed ones included) */
    readonly calls: ReadonlyArray<LlmRequest>
    /** the requests received for one stage */
    readonly callsFor: (stage: string) => ReadonlyArray<LlmRequest>
  }
>() {
  static readonly DEFAULT_MODEL = "scripted-model"
  static readonly PROVIDER = "scripted"

  /** Builds both services over one shared record of calls (for use outside a Layer too). */
  static make(script: LlmScript, options: ScriptedLlmOptions = {}) {
    const provider = options.provider ?? ScriptedLlm.PROVIDER
    const defaultModel = options.defaultModel ?? ScriptedLlm.DEFAULT_MODEL
    const calls: Array<LlmRequest> = []
    // a private copy, so one script object can serve several layers
    const queues = new Map<string, Array<ScriptedAnswer>>(
      typeof script === "function" ? [] : Object.entries(script).map(([stage, answers]) => [stage, [...answers]])
    )
    const next = (request: LlmRequest, index: number): ScriptedAnswer | undefined =>
      typeof script === "function" ? script(request, index) : queues.get(request.stage)?.shift()

    const complete = (request: LlmRequest): Effect.Effect<LlmResponse, LlmFailed | LlmUnavailable> =>
      Effect.suspend(() => {
        const index = calls.push(request) - 1
        const answer = next(request, index)
        if (answer === undefined) {
          return Effect.fail(
            new LlmFailed({
              message: `ScriptedLlm: no scripted answer left for stage ${request.stage} (call #${index})`,
              stage: request.stage
            })
          )
        }
        if ("fail" in answer) {
          const failure = answer.fail
          return Effect.fail(
            failure instanceof LlmFailed || failure instanceof LlmUnavailable
              ? failure
              : new LlmFailed({ ...failure, stage: request.stage })
          )
        }
        return Effect.succeed({
          text: answer.text,
          model: answer.model ?? (request.model || defaultModel),
          provider,
          stopReason: answer.stopReason ?? "end_turn",
          reasoning: answer.reasoning ?? request.reasoning,
          usage: {
            inputTokens: answer.usage?.inputTokens ?? 0,
            outputTokens: answer.usage?.outputTokens ?? 0,
            cacheReadTokens: answer.usage?.cacheReadTokens ?? 0,
            cacheWriteTokens: answer.usage?.cacheWriteTokens ?? 0,
            webSearchRequests: answer.usage?.webSearchRequests ?? 0
          },
          blocks: answer.blocks ?? [{ type: "text", text: answer.text }]
        })
      })

    return {
      llm: Llm.of({ provider, defaultModel, complete }),
      scripted: ScriptedLlm.of({
        calls,
        callsFor: (stage) => calls.filter((call) => call.stage === stage)
      })
    }
  }

  /** The Llm and this recorder; a fresh record (and fresh queues) per build. */
  static layer(script: LlmScript, options?: ScriptedLlmOptions): Layer.Layer<Llm | ScriptedLlm> {
    return Layer.effectContext(
      Effect.sync(() => {
        const { llm, scripted } = ScriptedLlm.make(script, options)
        return Context.make(Llm, llm).pipe(Context.add(ScriptedLlm, scripted))
      })
    )
  }

  /** An answer whose text is the JSON of `value`. */
  static json(value: unknown, rest: Omit<Extract<ScriptedAnswer, { text: string }>, "text"> = {}): ScriptedAnswer {
    return { ...rest, text: JSON.stringify(value) }
  }
}
