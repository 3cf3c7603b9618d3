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
import { Embeddings } from "../services/Embeddings.js"
import { ForgetRepo } from "../services/ForgetRepo.js"
import { afterForget, type ForgetScope, inDataset } from "./envelope.js"
import { forgetRows } from "./forgetRows.js"
import type { ForgetArtifactResponse } from "./schemas.js"

/** The rows whose words a forget changed, embedded again when embeddings are on (after the commit). */
export const reembedChanged = (scope: ForgetScope) =>
  Effect.flatMap(
    Embeddings,
    (embeddings) => embeddings.enabled ? reembed({ userId: scope.user_id, dataset: scope.dataset }) : Effect.void
  )

/** `DELETE /v1/gb/artifacts/{id}`. A dataset or artifact of another user is a 404, as a missing one. */
export const forgetArtifact = (scope: ForgetScope, artifactId: number) =>
  Effect.gen(function*() {
    const outcome = yield* inDataset(scope, `artifact ${artifactId}`, (dataset, now) =>
      Effect.gen(function*() {
        const doomed = yield* (yield* ForgetRepo).descendants(dataset.id, artifactId)
        if (doomed.length === 0) {
          return yield* new NotFound({ message: `artifact ${artifactId} not found in this dataset` })
        }
        return yield* forgetRows(dataset.id, { artifacts: doomed, facts: [], entities: [] }, now)
      }))
    const { vectorsPending } = yield* afterForget({ vectors: outcome.outboxIds, reembed: reembedChanged(scope) })
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
    } satisfies ForgetArtifactResponse
  })
