/**
 * The forget side's programs as two services (docs/FORGET.md): `Forgets` deletes for good (an
 * artifact, an image, a dataset of every row of its name, a user), `Corrections` corrects by
 * hand (delete a fact or an entity, close a fact or reopen it, merge entities). Both are built
 * once in the composition over the app's ports; every door calls them: the HTTP handlers, the
 * MCP forget tool, `src/operations.ts` and the CLI. Each method is a span (`Forgets.forgetUser`, ...).
 *
 * The programs read their ports from the context, each naming what it uses in its type; the
 * layer takes the composition's ports once (those alone: a call's own services, its caller and
 * request, stay its own) and gives them to every call, so a method needs nothing from its
 * caller's context.
 */
import { Context, Effect, Layer } from "effect"
import type { Conflict, InvalidRequest, NotFound } from "../domain/Errors.js"
import { REEMBED_PORTS, type ReembedPorts } from "../pipeline/reembed.js"
import { EraseRepo } from "../services/EraseRepo.js"
import { ForgetRepo } from "../services/ForgetRepo.js"
import { ImageStore } from "../services/ImageStore.js"
import { traced } from "../telemetry/traced.js"
import { deleteEntity, deleteFact, invalidateFact, mergeEntities, reopenFact } from "./corrections.js"
import type { ForgetScope } from "./envelope.js"
import { forgetUser, hardDeleteDataset } from "./erase.js"
import { forgetArtifact } from "./forgetArtifact.js"
import { forgetImage } from "./forgetImage.js"
import type { ForgetArtifactRequest, ForgetUserRequest, HardDeleteRequest } from "./requests.js"
import type {
  FactResponse,
  ForgetArtifactResponse,
  ForgetImageResponse,
  ForgetUserResponse,
  HardDeletedDataset,
  InvalidateFactRequest,
  MergeEntitiesRequest,
  MergeEntitiesResponse,
  ReopenFactRequest
} from "./schemas.js"

/** A row of a user's dataset, by its id. */
export interface ScopedId extends ForgetScope {
  readonly id: number
}

export interface ForgetsService {
  /** `DELETE /v1/gb/artifacts/{id}` */
  readonly forgetArtifact: (request: ForgetArtifactRequest) => Effect.Effect<ForgetArtifactResponse, NotFound>
  /** `DELETE /v1/gb/images/{id}` */
  readonly forgetImage: (request: ScopedId) => Effect.Effect<ForgetImageResponse, NotFound>
  /** `DELETE /v1/gb/users/{user_id}` */
  readonly forgetUser: (request: ForgetUserRequest) => Effect.Effect<ForgetUserResponse, NotFound>
  /** `DELETE /v1/gb/datasets/{name}?hard=true` */
  readonly hardDeleteDataset: (request: HardDeleteRequest) => Effect.Effect<HardDeletedDataset, NotFound>
}

export class Forgets extends Context.Tag("gligabao/Forgets")<Forgets, ForgetsService>() {}

export interface CorrectionsService {
  /** `DELETE /v1/gb/facts/{id}` */
  readonly deleteFact: (request: ScopedId) => Effect.Effect<ForgetArtifactResponse, NotFound>
  /** `DELETE /v1/gb/entities/{id}` */
  readonly deleteEntity: (request: ScopedId) => Effect.Effect<ForgetArtifactResponse, NotFound>
  /** `POST /v1/gb/facts/{id}/invalidate` */
  readonly invalidateFact: (
    request: InvalidateFactRequest & { readonly id: number }
  ) => Effect.Effect<FactResponse, NotFound | Conflict | InvalidRequest>
  /** `POST /v1/gb/facts/{id}/reopen` */
  readonly reopenFact: (
    request: ReopenFactRequest & { readonly id: number }
  ) => Effect.Effect<FactResponse, NotFound | Conflict>
  /** `POST /v1/gb/entities/merge` */
  readonly mergeEntities: (
    request: MergeEntitiesRequest
  ) => Effect.Effect<MergeEntitiesResponse, NotFound | InvalidRequest>
}

export class Corrections extends Context.Tag("gligabao/Corrections")<Corrections, CorrectionsService>() {}

/** What the corrections read and write through: the forget's repository, and what a re-embedding uses. */
export type CorrectionPorts = ForgetRepo | ReembedPorts

/** What the forgets use besides: the erase's repository and the image files. */
export type ForgetPorts = CorrectionPorts | EraseRepo | ImageStore

const scopeOf = (request: ForgetScope): ForgetScope => ({ user_id: request.user_id, dataset: request.dataset })

/** The forget programs over one set of ports. */
export const makeForgets = (ports: Context.Context<ForgetPorts>): ForgetsService =>
  traced(
    "Forgets",
    {
      forgetArtifact: (request) => Effect.provide(forgetArtifact(scopeOf(request), request.artifact_id), ports),
      forgetImage: (request) => Effect.provide(forgetImage(scopeOf(request), request.id), ports),
      forgetUser: (request) => Effect.provide(forgetUser(request.user_id), ports),
      hardDeleteDataset: (request) => Effect.provide(hardDeleteDataset(request), ports)
    } satisfies ForgetsService
  )

/** The correction programs over one set of ports. */
export const makeCorrections = (ports: Context.Context<CorrectionPorts>): CorrectionsService =>
  traced(
    "Corrections",
    {
      deleteFact: (request) => Effect.provide(deleteFact(scopeOf(request), request.id), ports),
      deleteEntity: (request) => Effect.provide(deleteEntity(scopeOf(request), request.id), ports),
      invalidateFact: ({ id, ...request }) => Effect.provide(invalidateFact(id, request), ports),
      reopenFact: ({ id, ...request }) => Effect.provide(reopenFact(id, request), ports),
      mergeEntities: (request) => Effect.provide(mergeEntities(request), ports)
    } satisfies CorrectionsService
  )

/** The app's forgets, over its storage, vector store, embeddings, image files and settings. */
export const ForgetsLive = Layer.effect(
  Forgets,
  Effect.map(
    Effect.context<ForgetPorts>(),
    (context) => makeForgets(Context.pick(...REEMBED_PORTS, ForgetRepo, EraseRepo, ImageStore)(context))
  )
)

/** The app's corrections, over its storage, vector store, embeddings and settings. */
export const CorrectionsLive = Layer.effect(
  Corrections,
  Effect.map(
    Effect.context<CorrectionPorts>(),
    (context) => makeCorrections(Context.pick(...REEMBED_PORTS, ForgetRepo)(context))
  )
)
