/**
 * `gligabao load`: a dump (src/domain/DumpFormat.ts) into this database, read line by line
 * (docs/TRANSFER.md). No model call: rows, their vectors and image files are written as the
 * dump has them, with new ids (remap.ts, loadGroup.ts).
 *
 * All or nothing per group (a user's dataset name), resumable by group: each group is one
 * transaction; before it, the target is asked what it holds of that user and name. Nothing:
 * the group is loaded. Exactly this group's datasets and runs (same creation times, same number
 * of runs): it was loaded by an earlier run of this load, and is skipped. Anything else: the
 * group is refused, named in the summary, and the load goes on with the next one (and ends
 * failed). So a load that stopped halfway (a truncated file, a crash) is run again as it was.
 */
import { Clock, Effect, Either, Option } from "effect"
import { type DumpRecord, type Header, readHeader, readLine, type RecordOf } from "../domain/DumpFormat.js"
import type { EmbeddingFailed, VectorWriteFailed } from "../domain/Errors.js"
import { toIso } from "../domain/time.js"
import type { ReembedPorts } from "../pipeline/reembed.js"
import { drainOutbox, OUTBOX_DRAIN_LIMIT } from "../pipeline/vectors.js"
import { Database } from "../services/Database.js"
import { Embeddings } from "../services/Embeddings.js"
import { ImageStore } from "../services/ImageStore.js"
import { type GroupKey, TransferRepo } from "../services/TransferRepo.js"
import { VectorOutbox } from "../services/VectorOutbox.js"
import { VectorStore } from "../services/VectorStore.js"
import { type GroupWritten, LOAD_BATCH, makeGroupWriter } from "./loadGroup.js"
import { type Reembedded, reembedLoaded } from "./reembedLoaded.js"
import { groupMaps } from "./remap.js"
import { TransferFailed } from "./TransferFailed.js"

export interface LoadOptions {
  /** the embedding size this database's vector store takes */
  readonly embeddingDimensions: number
  readonly embeddingModel: string
}

export interface LoadedGroup extends GroupKey {
  readonly records: Readonly<Record<string, number>>
}

export interface LoadSummary {
  readonly format_version: string
  readonly dumped_at: string
  readonly scope: Header["scope"]
  readonly loaded: ReadonlyArray<LoadedGroup>
  /** groups this database holds already, exactly as dumped (an earlier run of the load) */
  readonly skipped: ReadonlyArray<GroupKey & { readonly reason: string }>
  /** groups not loaded because this database holds other data of the same user and name */
  readonly refused: ReadonlyArray<GroupKey & { readonly reason: string }>
  readonly models: number
  /** model calls of no user (a whole dump): loaded, and already there */
  readonly unowned_inferences: { readonly loaded: number; readonly already_there: number }
  readonly vectors: { readonly included: boolean; readonly reason: string | null }
  /** what the load embedded because the dump has no vectors (null: nothing to do, or no embeddings) */
  readonly reembedded: Reembedded | null
  /** what was left without a vector, and why (no embeddings configured) */
  readonly not_embedded: string | null
  readonly images: { readonly written: number; readonly missing: number }
  /** records of kinds this gligabao does not know (a newer minor version's), skipped */
  readonly unknown_records: Readonly<Record<string, number>>
  readonly warnings: ReadonlyArray<string>
}

export type LoadPorts = TransferRepo | Database | VectorStore | VectorOutbox | ImageStore | ReembedPorts

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((x, i) => x === b[i])

/** The dump's lines, `next` giving each in turn (none at the end of the file). */
export const load = <E>(
  next: Effect.Effect<Option.Option<string>, E>,
  options: LoadOptions
): Effect.Effect<LoadSummary, E | TransferFailed | EmbeddingFailed | VectorWriteFailed, LoadPorts> =>
  Effect.gen(function*() {
    const repo = yield* TransferRepo
    const database = yield* Database
    const deps = {
      repo,
      outbox: yield* VectorOutbox,
      vectors: yield* VectorStore,
      images: yield* ImageStore,
      now: toIso(yield* Clock.currentTimeMillis)
    }
    let lineNo = 0
    const unknown: Record<string, number> = {}
    const warnings: Array<string> = []
    const fail = (message: string) => new TransferFailed({ message: `line ${lineNo}: ${message}` })

    /** the next line that is not blank */
    const nextLine: Effect.Effect<Option.Option<string>, E> = Effect.flatMap(next, (line) => {
      if (Option.isSome(line)) lineNo++
      return Option.isSome(line) && line.value.trim() === "" ? nextLine : Effect.succeed(line)
    })
    /** records read after the header (known or not), as the dump counts them in group_end and end */
    let seen = 0
    /** the next record this version knows (others are counted and skipped); none at the end of the file */
    const nextRecord: Effect.Effect<Option.Option<DumpRecord>, E | TransferFailed> = Effect.flatMap(
      nextLine,
      (line) => {
        if (Option.isNone(line)) return Effect.succeed(Option.none())
        seen++
        const read = readLine(line.value)
        switch (read._tag) {
          case "Record":
            return Effect.succeed(Option.some(read.record))
          case "Unknown":
            unknown[read.kind] = (unknown[read.kind] ?? 0) + 1
            return nextRecord
          case "Invalid":
            return Effect.fail(fail(read.message))
        }
      }
    )
    const truncated = () =>
      fail(
        "the dump ends before its end record: the file is cut short; load it again once it is whole " +
          "(what was loaded is skipped)"
      )

    const read = readHeader(Option.getOrUndefined(yield* nextLine))
    if (Either.isLeft(read)) return yield* new TransferFailed({ message: `the file cannot be loaded: ${read.left}` })
    const header = read.right
    if (header.vectors.included && header.vectors.embedding_dimensions !== options.embeddingDimensions) {
      return yield* new TransferFailed({
        message: `the dump's vectors have ${header.vectors.embedding_dimensions} dimensions ` +
          `(${header.vectors.embedding_model}) and this database's vector store takes ${options.embeddingDimensions}: ` +
          `configure embedding_dimensions (and the embedding model) as the source had them, ` +
          `or dump with --no-vectors and let the load embed again`
      })
    }
    if (header.vectors.included && header.vectors.embedding_model !== options.embeddingModel) {
      warnings.push(
        `the dump's vectors were made with ${header.vectors.embedding_model}, this configuration embeds ` +
          `with ${options.embeddingModel}: searches compare vectors of two models until they are the same`
      )
    }

    const models = new Map<number, number>()
    const loaded: Array<LoadedGroup> = []
    const skipped: Array<GroupKey & { reason: string }> = []
    const refused: Array<GroupKey & { reason: string }> = []
    const images = { written: 0, missing: 0 }
    const unowned = { loaded: 0, already_there: 0 }
    let groups = 0

    /** the records of a group up to its end, each handed to `each`; checks the count the dump gives */
    const groupRecords = <E2, R2>(group: RecordOf<"group">, each: (r: DumpRecord) => Effect.Effect<void, E2, R2>) =>
      Effect.gen(function*() {
        const start = seen
        for (;;) {
          const record = yield* nextRecord
          if (Option.isNone(record)) return yield* truncated()
          const r = record.value
          if (r.record === "group_end") {
            const count = seen - start - 1
            if (r.user_id !== group.user_id || r.dataset !== group.dataset || r.records !== count) {
              return yield* fail(
                `the group ${group.user_id}/${group.dataset} ends with ${count} records where ` +
                  `the dump says ${r.records}: the file is damaged`
              )
            }
            return
          }
          if (r.record === "group" || r.record === "end" || r.record === "model") {
            return yield* fail(`a record of kind ${r.record} inside the group ${group.user_id}/${group.dataset}`)
          }
          yield* each(r)
        }
      })

    const loadGroup = (group: RecordOf<"group">) =>
      Effect.gen(function*() {
        const key = { user_id: group.user_id, dataset: group.dataset }
        const writer = makeGroupWriter(deps, groupMaps(models))
        const written: GroupWritten = yield* database.withTransaction(Effect.gen(function*() {
          yield* groupRecords(group, (r) => writer.add(r, lineNo))
          yield* writer.flush
          for (const id of writer.written.datasetIds) yield* repo.rebuildEntityWords(id)
          return writer.written
        })).pipe(
          // the image files this group created go with its rows
          Effect.onError(() =>
            Effect.forEach(writer.written.createdFiles, (path) => Effect.ignore(deps.images.remove(path)), {
              discard: true
            })
          )
        )
        // vectors for a store outside the database: written once the rows are committed
        for (let i = 0; i < written.outboxIds.length; i += OUTBOX_DRAIN_LIMIT) {
          const drained = yield* Effect.either(
            drainOutbox({ ...deps, database }, written.outboxIds.slice(i, i + OUTBOX_DRAIN_LIMIT))
          )
          if (Either.isLeft(drained)) {
            warnings.push(
              `${key.user_id}/${key.dataset}: ${drained.left.message}; the vectors wait in the outbox, ` +
                `written when the server starts`
            )
            break
          }
        }
        images.written += written.createdFiles.length
        images.missing += written.imagesMissing
        if (written.idempotencyKeysKept > 0) {
          warnings.push(
            `${key.user_id}/${key.dataset}: ${written.idempotencyKeysKept} Idempotency-Keys the database had ` +
              `already for the user were kept as they were`
          )
        }
        loaded.push({ ...key, records: written.counts })
      })

    /** the target holds this group already (as the dump has it), nothing of it, or something else */
    const decide = (group: RecordOf<"group">) =>
      Effect.map(repo.existing(group), (existing) => {
        if (existing.datasetCreatedAt.length === 0 && existing.runs === 0) return { _tag: "Load" } as const
        if (sameList(existing.datasetCreatedAt, group.dataset_created_at) && existing.runs === group.runs) {
          return { _tag: "Skip", reason: "already loaded: this database has these datasets and runs" } as const
        }
        return {
          _tag: "Refuse",
          reason: `this database already has data of ${JSON.stringify(group.user_id)}'s dataset ` +
            `${JSON.stringify(group.dataset)} (${plural(existing.datasetCreatedAt.length, "dataset row")}, ` +
            `${plural(existing.runs, "run")}) that is not this dump's: nothing of it was loaded (a load never ` +
            `merges); forget it there first (gligabao forget dataset ${group.dataset} --user-id ${group.user_id}) ` +
            `or load into another database`
        } as const
      })

    const unownedInferences: Array<RecordOf<"inference">> = []
    const flushUnowned = Effect.suspend(() => {
      const batch = unownedInferences.splice(0)
      if (batch.length === 0) return Effect.void
      return database.withTransaction(Effect.gen(function*() {
        const fresh: Array<RecordOf<"inference">> = []
        for (const r of batch) {
          if (yield* repo.hasInference(r)) unowned.already_there++
          else fresh.push(r)
        }
        const ids = yield* repo.allocate("inference", fresh.length)
        yield* repo.insert(
          "inference",
          fresh.map(({ record: _, ...row }, i) => ({
            ...row,
            id: ids[i]!,
            model_id: row.model_id === null ? null : models.get(row.model_id) ?? null,
            run_id: null,
            dataset_id: null
          }))
        )
        unowned.loaded += fresh.length
      }))
    })

    for (;;) {
      const record = yield* nextRecord
      if (Option.isNone(record)) return yield* truncated()
      const r = record.value
      if (r.record !== "inference") yield* flushUnowned
      if (r.record === "end") {
        if (r.groups !== groups || r.records !== seen - 1) {
          return yield* fail(
            `the dump says ${r.groups} groups and ${r.records} records, the file has ${groups} and ` +
              `${seen - 1}: it is damaged`
          )
        }
        break
      }
      switch (r.record) {
        case "model":
          models.set(
            r.id,
            yield* repo.upsertModel({ id: r.id, provider: r.provider, name: r.name, created_at: r.created_at })
          )
          break
        case "inference":
          unownedInferences.push(r)
          if (unownedInferences.length >= LOAD_BATCH) yield* flushUnowned
          break
        case "group": {
          groups++
          const key = { user_id: r.user_id, dataset: r.dataset }
          const decision = yield* decide(r)
          if (decision._tag === "Load") yield* loadGroup(r)
          else {
            yield* groupRecords(r, () => Effect.void)
            ;(decision._tag === "Skip" ? skipped : refused).push({ ...key, reason: decision.reason })
          }
          break
        }
        default:
          return yield* fail(`a record of kind ${r.record} outside any group`)
      }
    }

    const embedded = yield* reembedAfter(header, loaded, skipped)
    return {
      format_version: header.format_version,
      dumped_at: header.created_at,
      scope: header.scope,
      loaded,
      skipped,
      refused,
      models: models.size,
      unowned_inferences: unowned,
      vectors: { included: header.vectors.included, reason: header.vectors.reason },
      ...embedded,
      images,
      unknown_records: unknown,
      warnings
    }
  })

/** A dump without vectors: embed what was loaded, or say what is left without a vector. */
const reembedAfter = (
  header: Header,
  loaded: ReadonlyArray<LoadedGroup>,
  skipped: ReadonlyArray<GroupKey>
) =>
  Effect.gen(function*() {
    if (header.vectors.included) return { reembedded: null, not_embedded: null }
    const embeddings = yield* Embeddings
    if (!embeddings.enabled) {
      const sum = (kind: string) => loaded.reduce((n, g) => n + (g.records[kind] ?? 0), 0)
      return {
        reembedded: null,
        not_embedded: `the dump has no vectors and no embeddings are configured: ${sum("entity")} entities, ` +
          `${sum("edge")} facts and the chunks and summaries of the loaded datasets have none; configure ` +
          `embeddings, then run \`gligabao reembed\` (entities and facts; chunks and summaries are embedded ` +
          `only by a load with embeddings configured)`
      }
    }
    // entities and facts of the groups an earlier run loaded too (reembed skips what has a vector)
    const groups = [
      ...loaded.map((g) => ({ user_id: g.user_id, dataset: g.dataset, withArtifacts: true })),
      ...skipped.map((g) => ({ user_id: g.user_id, dataset: g.dataset, withArtifacts: false }))
    ]
    return { reembedded: yield* reembedLoaded(groups), not_embedded: null }
  })
