import { Context, Data, type Effect, type Option } from "effect"

export type Complexity = "simple" | "medium" | "complex"

export interface ComplexityResult {
  readonly complexity: Complexity
  readonly confidence: number
  readonly probabilities: Readonly<Record<string, number>>
  readonly latency_ms: number
}

export class ClassifierFailed extends Data.TaggedError("ClassifierFailed")<{ readonly message: string }> {}

/** Advisory: predicts how many entities a text yields. `None` when no classifier is configured. */
export class ComplexityClassifier extends Context.Tag("gligabao/ComplexityClassifier")<
  ComplexityClassifier,
  {
    /** false when no classifier is configured: the stage does not run */
    readonly enabled: boolean
    readonly classify: (text: string) => Effect.Effect<Option.Option<ComplexityResult>, ClassifierFailed>
  }
>() {}
