/**
 * The remember pipeline for an image (spec: seed-images.txt), separate from the text one:
 *
 *   find_existing_image -> extract_image (one vision call) -> store_image
 *
 * A repeat (same SHA-256 in the same dataset) is answered from the stored newest extraction in
 * find_existing_image: no model call, nothing stored, the file written again if it has gone.
 * Nothing is added to the graph. The file is written before the rows and removed again if the
 * rows fail; rows and dataset creation are one transaction, so a failed call stores nothing.
 */
import { Clock, Effect, Either, Option } from "effect"
import { InternalFailure, InvalidRequest, LlmFailed, type RememberError } from "../../domain/Errors.js"
import {
  type ImageArtifactRow,
  type ImageExtractionRow,
  imagePath,
  validateImage,
  type ValidImage
} from "../../domain/Image.js"
import type { RememberRequest } from "../../domain/Remember.js"
import type { RememberOutcome } from "../../domain/Responses.js"
import { toIso } from "../../domain/time.js"
import type { Database } from "../../services/Database.js"
import type { DatasetsRepo } from "../../services/DatasetsRepo.js"
import type { ImagesRepo } from "../../services/ImagesRepo.js"
import type { ImageStore, ImageStoreFailed } from "../../services/ImageStore.js"
import type { InferencesRepo } from "../../services/InferencesRepo.js"
import type { Llm } from "../../services/Llm.js"
import type { RunLogRepo } from "../../services/RunLogRepo.js"
import type { RunObserver } from "../../services/RunObserver.js"
import { type CallContext, callLlm, type RecordedResponse } from "../ModelCalls.js"
import { makeRunRecorder } from "../RunRecorder.js"
import type { RememberSettingsShape } from "../Settings.js"
import {
  buildExtractImagePrompt,
  EXTRACT_IMAGE_ANSWER,
  EXTRACT_IMAGE_MAX_TOKENS,
  type ImageReading,
  parseImageAnswer
} from "./prompt.js"

/** The services an image run uses, taken from the composition once by the pipeline's `make` (RememberPipelineLive.ts). */
export interface ImageServices {
  readonly llm: Llm["Type"]
  readonly database: Database["Type"]
  readonly datasets: DatasetsRepo["Type"]
  readonly images: ImagesRepo["Type"]
  readonly files: ImageStore["Type"]
  readonly inferences: InferencesRepo["Type"]
  readonly runLog: RunLogRepo["Type"]
  readonly settings: RememberSettingsShape
}

const nowIso = Effect.map(Clock.currentTimeMillis, toIso)

/** The seed's default for extract_image when the request sets no level. */
export const EXTRACT_IMAGE_DEFAULT_REASONING = "low" as const

const fileFailure = (stage: string) => (e: ImageStoreFailed) =>
  new InternalFailure({ message: `${stage}: ${e.message}` })

/** The response of contracts section 15 (the handler adds remember_run_id). */
export const imageResponse = (artifact: ImageArtifactRow, extraction: ImageExtractionRow, cached: boolean) => ({
  pipeline: "image",
  image_artifact_id: artifact.id,
  extraction_id: extraction.id,
  ...(artifact.session_id === null ? {} : { session_id: artifact.session_id }),
  path: artifact.path,
  media_type: artifact.media_type,
  bytes: artifact.bytes,
  sha256: artifact.sha256,
  theme: extraction.theme,
  title: extraction.title,
  text: extraction.text,
  text_blocks: extraction.text_blocks.map((b) => ({ kind: b.kind, text: b.text })),
  model: extraction.model,
  provider: extraction.provider,
  reasoning: extraction.reasoning,
  input_tokens: extraction.input_tokens,
  output_tokens: extraction.output_tokens,
  cost_usd: extraction.cost_usd,
  cached,
  valid_at: artifact.valid_at,
  created_at: artifact.created_at
})

/** What find_existing_image found: nothing, an artifact to extract again, or a full repeat. */
type Existing =
  | { readonly _tag: "None" }
  | { readonly _tag: "ArtifactOnly"; readonly artifact: ImageArtifactRow }
  | {
    readonly _tag: "Repeat"
    readonly artifact: ImageArtifactRow
    readonly extraction: ImageExtractionRow
    readonly rewritten: boolean
  }

/** find_existing_image: the dataset's artifact of these bytes; a repeat gets its file back if it is gone. */
const findExisting = (
  deps: ImageServices,
  datasetId: number | null,
  image: ValidImage
): Effect.Effect<Existing, InternalFailure> =>
  Effect.gen(function*() {
    if (datasetId === null) return { _tag: "None" } as const
    const artifact = yield* deps.images.findBySha256(datasetId, image.sha256)
    if (Option.isNone(artifact)) return { _tag: "None" } as const
    const extraction = yield* deps.images.newestExtraction(artifact.value.id)
    // an artifact whose extractions were deleted is read again, into that artifact
    if (Option.isNone(extraction)) return { _tag: "ArtifactOnly", artifact: artifact.value } as const
    const rewritten = yield* deps.files.write(artifact.value.path, image.bytes).pipe(
      Effect.mapError(fileFailure("find_existing_image"))
    )
    if (rewritten) yield* Effect.logWarning("image file was missing; written again", { path: artifact.value.path })
    return { _tag: "Repeat", artifact: artifact.value, extraction: extraction.value, rewritten } as const
  })

/** extract_image: the one vision call, its answer parsed and normalized. */
const extractImage = (ctx: CallContext, request: RememberRequest, image: ValidImage) =>
  Effect.gen(function*() {
    const prompt = buildExtractImagePrompt({ mediaType: image.media_type, base64: image.base64 })
    const response = yield* callLlm(ctx, {
      stage: "extract_image",
      model: request.models.extract_image,
      reasoning: request.reasoning.extract_image ?? EXTRACT_IMAGE_DEFAULT_REASONING,
      system: prompt.system,
      messages: [{ role: "user", content: prompt.content }],
      maxTokens: EXTRACT_IMAGE_MAX_TOKENS,
      answerSchema: EXTRACT_IMAGE_ANSWER
    })
    const reading = parseImageAnswer(response.text)
    if (Either.isLeft(reading)) {
      return yield* new LlmFailed({
        message: `extract_image: unusable answer from the model: ${reading.left}`,
        stage: "extract_image"
      })
    }
    return { reading: reading.right, response }
  })

interface StoreInput {
  readonly request: RememberRequest
  readonly image: ValidImage
  /** an artifact of these bytes already stored (its extractions were gone) */
  readonly artifact: ImageArtifactRow | null
  readonly reading: ImageReading
  readonly response: RecordedResponse
  readonly referenceTime: string
}

/**
 * store_image: dataset, file and rows. The file needs the dataset's id, and a new dataset must
 * not outlive a failed store, so the file is written inside the transaction, before the rows
 * (local disk, never a network call); a file this call created is removed if anything fails,
 * the commit included.
 */
const storeImage = (deps: ImageServices, input: StoreInput) =>
  Effect.gen(function*() {
    const now = yield* nowIso
    let created: string | null = null
    const extraction = {
      inference_id: input.response.inferenceId,
      model: input.response.model,
      provider: input.response.provider,
      reasoning: input.response.reasoning,
      theme: input.reading.theme,
      title: input.reading.title,
      text: input.reading.text,
      input_tokens: input.response.usage.inputTokens,
      output_tokens: input.response.usage.outputTokens,
      cost_usd: input.response.costUsd,
      created_at: now,
      text_blocks: input.reading.text_blocks
    }
    const rows = Effect.gen(function*() {
      const dataset = yield* deps.datasets.getOrCreate(input.request.user_id, input.request.dataset, now)
      const path = input.artifact?.path ?? imagePath(dataset.id, input.image)
      if (yield* deps.files.write(path, input.image.bytes).pipe(Effect.mapError(fileFailure("store_image")))) {
        created = path
      }
      if (input.artifact !== null) {
        return {
          dataset,
          artifact: input.artifact,
          extraction: yield* deps.images.insertExtraction(input.artifact.id, extraction)
        }
      }
      const stored = yield* deps.images.insert({
        dataset_id: dataset.id,
        session_id: input.request.session_id ?? null,
        sha256: input.image.sha256,
        path,
        media_type: input.image.media_type,
        bytes: input.image.bytes.length,
        valid_at: input.referenceTime,
        created_at: now
      }, extraction)
      return { dataset, ...stored }
    })
    return yield* deps.database.withTransaction(rows).pipe(
      Effect.withSpan("sql.store_image"),
      Effect.onExit((exit) =>
        exit._tag === "Success" || created === null
          ? Effect.void
          : deps.files.remove(created).pipe(
            Effect.catchAll((e) =>
              Effect.logWarning("could not remove the image file of a failed store", { error: e.message })
            )
          )
      ),
      Effect.map((stored) => ({ ...stored, fileCreated: created !== null }))
    )
  })

export const rememberImage = (
  deps: ImageServices,
  runId: number,
  request: RememberRequest,
  observer?: RunObserver
): Effect.Effect<RememberOutcome, RememberError> =>
  Effect.gen(function*() {
    // validation decodes the image once; a request built in code may arrive without it
    const image = request.image_file ?? (yield* Either.match(validateImage(request.image ?? ""), {
      onLeft: (message) => Effect.fail(new InvalidRequest({ message })),
      onRight: Effect.succeed
    }))
    const recorder = makeRunRecorder(deps.runLog, runId, observer, { dataset: request.dataset })
    const referenceTime = request.reference_time ?? (yield* nowIso)
    const dataset = yield* deps.datasets.find(request.user_id, request.dataset)
    const datasetId = Option.match(dataset, { onNone: () => null, onSome: (d) => d.id })

    const existing = yield* recorder.stage(
      "find_existing_image",
      findExisting(deps, datasetId, image),
      (x) =>
        x._tag === "Repeat"
          ? {
            found: true,
            image_artifact_id: x.artifact.id,
            extraction_id: x.extraction.id,
            file_rewritten: x.rewritten
          }
          : x._tag === "ArtifactOnly"
          ? { found: true, image_artifact_id: x.artifact.id, extraction_id: null }
          : { found: false },
      (x) => ({
        arguments: { sha256: image.sha256, media_type: image.media_type, bytes: image.bytes.length },
        observation: x._tag === "None"
          ? { found: false }
          : {
            found: true,
            image_artifact_id: x.artifact.id,
            path: x.artifact.path,
            ...(x._tag === "Repeat" ? { extraction_id: x.extraction.id, cached: true } : { extraction_id: null })
          }
      })
    )
    if (existing._tag === "Repeat") {
      return {
        response: imageResponse(existing.artifact, existing.extraction, true),
        dataset_id: existing.artifact.dataset_id,
        artifact_id: existing.artifact.id
      }
    }

    const ctx: CallContext = {
      llm: deps.llm,
      inferences: deps.inferences,
      prices: deps.settings.prices,
      type: "remember_image",
      runId,
      datasetId,
      recorder,
      runStage: "extract_image"
    }
    const { reading, response } = yield* recorder.stage(
      "extract_image",
      extractImage(ctx, request, image),
      (x) => ({ model: x.response.model, theme: x.reading.theme, text_blocks: x.reading.text_blocks.length })
    )
    const stored = yield* recorder.stage(
      "store_image",
      storeImage(deps, {
        request,
        image,
        artifact: existing._tag === "ArtifactOnly" ? existing.artifact : null,
        reading,
        response,
        referenceTime
      }),
      (s) => ({
        image_artifact_id: s.artifact.id,
        extraction_id: s.extraction.id,
        path: s.artifact.path,
        file_created: s.fileCreated
      })
    )
    return {
      response: imageResponse(stored.artifact, stored.extraction, false),
      dataset_id: stored.dataset.id,
      artifact_id: stored.artifact.id
    }
  }).pipe(Effect.withSpan("remember.image", { attributes: { runId } }))
