/**
 * `gligabao eval DIR [--models stage=model,...] [--output DIR] [--user-id U]`: runs the
 * knowledge eval cases of DIR against the configured models and prints the table (the
 * command itself, with its layers, is in main.ts).
 */
import type { FileSystem, Path } from "@effect/platform"
import { Clock, Effect, Either, Random } from "effect"
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
