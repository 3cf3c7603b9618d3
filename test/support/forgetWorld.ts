/**
 * The forget tests' world: the texts remembered as a user through the fact-sentence model, one of
 * them forgotten (when given), then the graph as the test's view reads it.
 */
import { Effect, type Layer } from "effect"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { Forgets } from "../../src/forget/Forgets.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer, textBody, textRequest } from "./app.js"
import type { StorageLayer } from "./databases.js"

/** Remembers the texts as `user`, forgets text `k` (when given), and gives `view(user)`. */
export const forgetWorld =
  <A, E, R>(view: (user: string) => Effect.Effect<A, E, R>) =>
  (user: string, texts: ReadonlyArray<string>, k?: number) =>
    Effect.gen(function*() {
      const manager = yield* RememberManager
      const stored = yield* Effect.forEach(texts, (text) =>
        Effect.map(manager.submit(textRequest(text, { user_id: user })), textBody))
      if (k !== undefined) {
        yield* (yield* Forgets).forgetArtifact({ user_id: user, dataset: "main", artifact_id: stored[k]!.artifact_id })
      }
      return yield* view(user)
    })

/** A program run on a remember app of the dialect's database, answered by the fact-sentence model. */
export const onFactSentenceApp = (database: StorageLayer) => <A, E>(program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(rememberLayer(database, (r: LlmRequest) => ({ text: answer(r).text })) as Layer.Layer<any>)
  ) as Effect.Effect<A, E, never>
