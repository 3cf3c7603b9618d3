/**
 * Forget an artifact, exactly (docs/FORGET.md): the artifact and everything derived from it go;
 * a fact no remaining artifact supports goes, one still supported takes the words of its oldest
 * remaining supporter; what the forgotten facts closed is reopened, unless a remaining decision
 * still closes it (the earliest wins); entities nothing supports go; vector deletes go through
 * the outbox. Under the dataset's lock, in one transaction (forgetRows: load, plan, apply);
 * vectors are written after it.
 */
import { Effect } from "effect"
import { NotFound } from "../domain/Errors.js"
import { reembed } from "../pipeline/reembed.js"
import type { ForgetDeps, ForgetScope } from "./deps.js"
import { afterForget, inDataset } from "./envelope.js"
import { forgetRows } from "./forgetRows.js"
import type { ForgetArtifactResponse } from "./schemas.js"

export type { ForgetDeps, ForgetScope } from "./deps.js"

/** The rows whose words a forget changed, embedded again when embeddings are on (after the commit). */
export const reembedChanged = (deps: ForgetDeps, scope: ForgetScope) =>
  deps.embeddings.enabled ? reembed(deps, { userId: scope.user_id, dataset: scope.dataset }) : Effect.void

/**
 * `DELETE /v1/gb/artifacts/{id}`: the program the handler, the library and the CLI run. A
 * dataset or artifact of another user is a 404, as a missing one.
 */
export const forgetArtifact = (
  deps: ForgetDeps,
  scope: ForgetScope,
  artifactId: number
): Effect.Effect<ForgetArtifactResponse, NotFound> =>
  Effect.gen(function*() {
    const outcome = yield* inDataset(deps, scope, `artifact ${artifactId}`, (dataset, now) =>
      Effect.gen(function*() {
        const doomed = yield* deps.forget.descendants(dataset.id, artifactId)
        if (doomed.length === 0) {
          return yield* new NotFound({ message: `artifact ${artifactId} not found in this dataset` })
        }
        return yield* forgetRows(deps, dataset.id, { artifacts: doomed, facts: [], entities: [] }, now)
      }))
    const { vectorsPending } = yield* afterForget(deps, {
      vectors: outcome.outboxIds,
      reembed: reembedChanged(deps, scope)
    })
    return {
      deleted: {
        artifacts: outcome.artifacts,
        entities: outcome.entities,
        facts: outcome.facts,
        vectors: outcome.vectors
      },
      reopened_facts: outcome.reopened,
      reanchored_facts: outcome.reanchored,
      ...(vectorsPending > 0 ? { vectors_pending: vectorsPending } : {})
    }
  })
