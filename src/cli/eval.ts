/**
 * `gligabao eval DIR [--provider P] [--base-url URL] [--model M] [--models stage=model,...]
 * [--output DIR] [--user-id U]`: runs the knowledge eval cases of DIR against the configured
 * models (or the LLM the flags name: a local OpenAI-compatible server) and prints the table
 * (the command itself, with its layers, is in main.ts).
 */
import type { FileSystem, Path } from "@effect/platform"
import { Clock, Effect, Either, Option, Random } from "effect"
import { LLM_PROVIDERS } from "../config/keys.js"
import * as V from "../config/values.js"
import { validateRememberRequest } from "../domain/Remember.js"
import type { ModelStage } from "../domain/Stages.js"
import { loadCases } from "../eval/cases.js"
import { formatReport, runEvals } from "../eval/runner.js"
import type { RememberManager } from "../pipeline/RememberManager.js"
import type { DatasetsRepo } from "../services/DatasetsRepo.js"
import type { SearchRepo } from "../services/SearchRepo.js"

/** `extract_graph=m1,resolve_edges=m2` -> the models map, checked as a request's `models` is. */
export const parseModelsFlag = (
  flag: string | undefined
): Either.Either<Partial<Record<ModelStage, string>>, string> => {
  if (flag === undefined || flag.trim() === "") return Either.right({})
  const models: Record<string, string> = {}
  for (const pair of flag.split(",")) {
    const [stage, model, ...rest] = pair.split("=").map((s) => s.trim())
    if (stage === undefined || stage === "" || model === undefined || rest.length > 0) {
      return Either.left(`--models takes stage=model pairs separated by commas, not ${JSON.stringify(pair)}`)
    }
    models[stage] = model
  }
  return Either.map(
    Either.mapLeft(validateRememberRequest({ user_id: "eval", text: "eval", models }), (e) => `--${e.message}`),
    (r) => r.models
  )
}

/**
 * `--provider`, `--base-url` and `--model` as the configuration's own variables
 * (GLIGABAO_LLM_PROVIDER, GLIGABAO_LLM_BASE_URL, GLIGABAO_LLM_DEFAULT_MODEL), which the
 * configuration is then loaded with over the environment: the flags win over the file and
 * the environment, are checked as those keys are, and `--provider openai` picks the OpenAI key
 * (none is needed with `--base-url`: a local server, e.g. Ollama or llama.cpp).
 */
export const evalLlmEnv = (flags: {
  readonly provider?: string | undefined
  readonly baseUrl?: string | undefined
  readonly model?: string | undefined
}): Either.Either<Record<string, string>, string> => {
  const env: Record<string, string> = {}
  const checks = [
    ["provider", flags.provider, V.literal(LLM_PROVIDERS), "GLIGABAO_LLM_PROVIDER"],
    ["base-url", flags.baseUrl, V.httpUrl, "GLIGABAO_LLM_BASE_URL"],
    ["model", flags.model, V.modelName, "GLIGABAO_LLM_DEFAULT_MODEL"]
  ] as const
  for (const [flag, value, spec, variable] of checks) {
    if (value === undefined) continue
    if (Option.isNone((spec as V.ValueSpec<string>).decode(value, true))) {
      return Either.left(`--${flag} ${JSON.stringify(value)}: expected ${spec.expected}`)
    }
    env[variable] = value.trim()
  }
  return Either.right(env)
}

/** A label unique to this eval run: its UTC time and a random suffix. */
export const evalLabel = Effect.gen(function*() {
  const now = new Date(yield* Clock.currentTimeMillis).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "")
  const suffix = (yield* Random.nextIntBetween(0, 0x10000)).toString(16).padStart(4, "0")
  return `${now}-${suffix}`
})

export const runEvalCommand = (
  dir: string,
  flags: {
    readonly models?: string | undefined
    readonly output?: string | undefined
    readonly userId?: string | undefined
  }
): Effect.Effect<void, Error, RememberManager | DatasetsRepo | SearchRepo | FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const models = parseModelsFlag(flags.models)
    if (Either.isLeft(models)) return yield* Effect.fail(new Error(models.left))
    const cases = yield* loadCases(dir)
    const label = yield* evalLabel
    const outputDir = flags.output ?? `build/evals/${label}`
    yield* Effect.logInfo("running knowledge evals", { cases: cases.length, label, output: outputDir })
    const report = yield* runEvals(cases, { models: models.right, userId: flags.userId, label, outputDir })
    yield* Effect.sync(() => {
      console.log(formatReport(report))
      console.log(`\ntrajectories and results.json: ${outputDir}`)
    })
  })
