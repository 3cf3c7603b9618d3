/**
 * ATIF (Agent Trajectory Interchange Format, Harbor), schema version ATIF-v1.7, as Effect
 * Schema (guides/external-apis.md section 5). As Harbor's own models, every object forbids
 * unknown keys (custom data belongs in `extra`), and a trajectory also checks what a Harbor
 * validator checks across fields: step ids sequential from 1, agent-only fields only on agent
 * steps, and each observation's `source_call_id` naming a tool call of the same step.
 */
import { Either, ParseResult, Schema } from "effect"

/** what gligabao writes */
export const ATIF_SCHEMA_VERSION = "ATIF-v1.7" as const
/** what the schema accepts (a v1.7 reader reads the older versions) */
export const ATIF_VERSIONS = [
  "ATIF-v1.0",
  "ATIF-v1.1",
  "ATIF-v1.2",
  "ATIF-v1.3",
  "ATIF-v1.4",
  "ATIF-v1.5",
  "ATIF-v1.6",
  "ATIF-v1.7"
] as const

/** Unknown keys fail decoding, wherever the struct is used. */
const strict = { parseOptions: { onExcessProperty: "error" } } as const

const Extra = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Count = Schema.Int.pipe(Schema.nonNegative())
const Cost = Schema.Number.pipe(Schema.nonNegative())

export const ToolCall = Schema.Struct({
  tool_call_id: Schema.String,
  function_name: Schema.String,
  arguments: Extra,
  extra: Schema.optional(Extra)
}).annotations({ ...strict, identifier: "AtifToolCall" })

const ImageSource = Schema.Struct({
  media_type: Schema.String,
  path: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String)
}).annotations(strict)

/** v1.6 multimodal content */
export const ContentPart = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }).annotations(strict),
  Schema.Struct({ type: Schema.Literal("image"), source: ImageSource }).annotations(strict)
).annotations({ identifier: "AtifContentPart" })

const Content = Schema.Union(Schema.String, Schema.Array(ContentPart))

export const SubagentTrajectoryRef = Schema.Struct({
  trajectory_id: Schema.optional(Schema.String),
  session_id: Schema.optional(Schema.String),
  trajectory_path: Schema.optional(Schema.String),
  extra: Schema.optional(Extra)
}).annotations({ ...strict, identifier: "AtifSubagentTrajectoryRef" })

export const ObservationResult = Schema.Struct({
  source_call_id: Schema.optional(Schema.NullOr(Schema.String)),
  content: Schema.optional(Schema.NullOr(Content)),
  subagent_trajectory_ref: Schema.optional(Schema.NullOr(Schema.Array(SubagentTrajectoryRef))),
  extra: Schema.optional(Extra)
}).annotations({ ...strict, identifier: "AtifObservationResult" })

export const Observation = Schema.Struct({
  results: Schema.Array(ObservationResult)
}).annotations({ ...strict, identifier: "AtifObservation" })

export const Metrics = Schema.Struct({
  /** includes cached tokens */
  prompt_tokens: Schema.optional(Count),
  completion_tokens: Schema.optional(Count),
  /** a subset of prompt_tokens */
  cached_tokens: Schema.optional(Count),
  cost_usd: Schema.optional(Cost),
  prompt_token_ids: Schema.optional(Schema.Array(Schema.Int)),
  completion_token_ids: Schema.optional(Schema.Array(Schema.Int)),
  logprobs: Schema.optional(Schema.Array(Schema.Number)),
  extra: Schema.optional(Extra)
}).annotations({ ...strict, identifier: "AtifMetrics" })

const StepFields = Schema.Struct({
  step_id: Schema.Int.pipe(Schema.positive()),
  timestamp: Schema.optional(Schema.String),
  source: Schema.Literal("system", "user", "agent"),
  model_name: Schema.optional(Schema.String),
  reasoning_effort: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  message: Content,
  reasoning_content: Schema.optional(Schema.String),
  tool_calls: Schema.optional(Schema.Array(ToolCall)),
  observation: Schema.optional(Observation),
  metrics: Schema.optional(Metrics),
  llm_call_count: Schema.optional(Count),
  is_copied_context: Schema.optional(Schema.Boolean),
  extra: Schema.optional(Extra)
}).annotations(strict)

const AGENT_ONLY = [
  "model_name",
  "reasoning_effort",
  "reasoning_content",
  "tool_calls",
  "metrics",
  "llm_call_count"
] as const

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/

export const Step = StepFields.pipe(
  Schema.filter((step) => {
    if (step.source !== "agent") {
      const present = AGENT_ONLY.filter((k) => step[k] !== undefined)
      if (present.length > 0) return `a ${step.source} step must not have ${present.join(", ")} (agent steps only)`
    }
    if (step.timestamp !== undefined && !ISO_8601.test(step.timestamp)) {
      return `step ${step.step_id}: timestamp must be ISO 8601`
    }
    const ids = new Set((step.tool_calls ?? []).map((c) => c.tool_call_id))
    for (const r of step.observation?.results ?? []) {
      if (r.source_call_id != null && !ids.has(r.source_call_id)) {
        return `step ${step.step_id}: source_call_id ${r.source_call_id} is not a tool call of the step`
      }
    }
    return true
  })
).annotations({ identifier: "AtifStep" })

export const Agent = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  model_name: Schema.optional(Schema.String),
  tool_definitions: Schema.optional(Schema.Array(Extra)),
  extra: Schema.optional(Extra)
}).annotations({ ...strict, identifier: "AtifAgent" })

export const FinalMetrics = Schema.Struct({
  total_prompt_tokens: Schema.optional(Count),
  total_completion_tokens: Schema.optional(Count),
  total_cached_tokens: Schema.optional(Count),
  total_cost_usd: Schema.optional(Cost),
  total_steps: Schema.optional(Count),
  extra: Schema.optional(Extra)
}).annotations({ ...strict, identifier: "AtifFinalMetrics" })

export interface Trajectory {
  readonly schema_version: (typeof ATIF_VERSIONS)[number]
  readonly session_id?: string | undefined
  readonly trajectory_id?: string | undefined
  readonly agent: typeof Agent.Type
  readonly steps: ReadonlyArray<typeof Step.Type>
  readonly notes?: string | undefined
  readonly final_metrics?: typeof FinalMetrics.Type | undefined
  readonly continued_trajectory_ref?: string | undefined
  readonly subagent_trajectories?: ReadonlyArray<Trajectory> | undefined
  readonly extra?: { readonly [key: string]: unknown } | undefined
}

/** The root. */
export const Trajectory: Schema.Schema<Trajectory, any> = Schema.Struct({
  schema_version: Schema.Literal(...ATIF_VERSIONS),
  session_id: Schema.optional(Schema.String),
  trajectory_id: Schema.optional(Schema.String),
  agent: Agent,
  steps: Schema.Array(Step).pipe(Schema.minItems(1)),
  notes: Schema.optional(Schema.String),
  final_metrics: Schema.optional(FinalMetrics),
  continued_trajectory_ref: Schema.optional(Schema.String),
  subagent_trajectories: Schema.optional(
    Schema.Array(Schema.suspend((): Schema.Schema<Trajectory, any> => Trajectory))
  ),
  extra: Schema.optional(Extra)
}).annotations(strict).pipe(
  Schema.filter((t) => {
    const wrong = t.steps.findIndex((s, i) => s.step_id !== i + 1)
    return wrong === -1 || `step_id must be sequential from 1: step ${wrong + 1} has step_id ${t.steps[wrong]!.step_id}`
  })
).annotations({ identifier: "AtifTrajectory", description: "an ATIF-v1.7 trajectory (Harbor)" })

/** Checks a document against the schema: the trajectory, or every problem as one message. */
export const validateTrajectory = (u: unknown): Either.Either<Trajectory, string> =>
  Schema.decodeUnknownEither(Trajectory, { onExcessProperty: "error", errors: "all" })(u).pipe(
    Either.mapLeft((e) => ParseResult.TreeFormatter.formatErrorSync(e))
  )
