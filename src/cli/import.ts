/**
 * `gligabao import PATH`: many texts through the durable remember queue (docs/INGESTION.md).
 *
 * PATH is a JSONL file (one batch item per line) or a directory (its `.txt` and `.md` files in
 * name order, each with its modification time as reference time). The items are validated
 * first (nothing is queued when one is refused), then queued in batches of at most
 * MAX_BATCH_ITEMS items and about BATCH_BODY_LIMIT bytes: locally through the manager, or
 * against a running server through `POST /v1/gb/remember/batch`, whose runs are then polled.
 *
 * Resumable: an item's Idempotency-Key is derived from its place (file name or line number)
 * and a hash of its content, so importing the same PATH again gives the same runs and stores
 * nothing twice (while the keys live, remember.idempotency_ttl_hours).
 */
import { Cause, Effect, Either, Exit, FiberSet, Option } from "effect"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import type { RememberError } from "../domain/Errors.js"
import { BATCH_BODY_LIMIT, MAX_BATCH_ITEMS, validateRememberBatch } from "../domain/Remember.js"
import { DEFAULT_DATASET } from "../domain/Wire.js"
import { RememberManager } from "../pipeline/RememberManager.js"
import { importProgress, PROGRESS_LINE_EVERY_MS } from "./progress.js"
import type { CancelTarget } from "./runs.js"
import type { StopRequest } from "./signals.js"

export interface ImportOptions {
  readonly userId: string
  readonly dataset: string | undefined
  readonly kind: string | undefined
}

/** One item as the batch endpoint takes it, and where it came from (for messages). */
export interface ImportItem {
  readonly source: string
  readonly item: Record<string, unknown>
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** `<where>:<sha256 of where, 16>:<sha256 of content, 32>`: at most 128 bytes whatever the name. */
const keyFor = (where: string, content: string) =>
  `import:${sha256(where).slice(0, 16)}:${sha256(content).slice(0, 32)}`

const TEXT_FILE = /\.(txt|md)$/i

/** The items of PATH; a failure names the line or file that is not an item. */
export const readImportItems = (path: string, options: ImportOptions): Either.Either<Array<ImportItem>, Error> => {
  const withKind = (item: Record<string, unknown>) =>
    options.kind === undefined || item.kind != null || item.image != null ? item : { ...item, kind: options.kind }
  if (statSync(path).isDirectory()) {
    const names = readdirSync(path).filter((name) => TEXT_FILE.test(name) && statSync(join(path, name)).isFile())
      .sort()
    return Either.right(names.map((name) => {
      const file = join(path, name)
      const text = readFileSync(file, "utf8")
      return {
        source: name,
        item: withKind({
          text,
          reference_time: statSync(file).mtime.toISOString(),
          idempotency_key: keyFor(name, text)
        })
      }
    }))
  }
  const items: Array<ImportItem> = []
  const lines = readFileSync(path, "utf8").split("\n")
  for (const [i, line] of lines.entries()) {
    if (line.trim() === "") continue
    const source = `line ${i + 1}`
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      return Either.left(new Error(`${path}: ${source} is not JSON`))
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return Either.left(new Error(`${path}: ${source} is not a JSON object`))
    }
    const item = parsed as Record<string, unknown>
    items.push({
      source,
      item: withKind({ ...item, idempotency_key: item.idempotency_key ?? keyFor(`line ${i + 1}`, line.trim()) })
    })
  }
  return Either.right(items)
}

/** Batches of at most MAX_BATCH_ITEMS items and (a margin under) BATCH_BODY_LIMIT bytes of JSON. */
export const batchesOf = (items: ReadonlyArray<ImportItem>): Array<Array<ImportItem>> => {
  const budget = BATCH_BODY_LIMIT - 64 * 1024
  const batches: Array<Array<ImportItem>> = []
  let current: Array<ImportItem> = []
  let bytes = 0
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item.item), "utf8") + 1
    if (current.length > 0 && (current.length >= MAX_BATCH_ITEMS || bytes + size > budget)) {
      batches.push(current)
      current = []
      bytes = 0
    }
    current.push(item)
    bytes += size
  }
  if (current.length > 0) batches.push(current)
  return batches
}

/** Every item validated as the batch endpoint validates it; the first refused one named by its source. */
export const validateItems = (items: ReadonlyArray<ImportItem>, options: ImportOptions) => {
  for (const { item, source } of items) {
    const valid = validateRememberBatch({ user_id: options.userId, dataset: options.dataset, items: [item] })
    if (Either.isLeft(valid)) {
      return Either.left(new Error(`${source}: ${valid.left.message.replace(/^items\[0\]\./, "")}`))
    }
  }
  return Either.right(undefined)
}

export interface ImportSummary {
  readonly items: number
  /** runs queued by this import (the others were queued by an earlier one: same key, same content) */
  readonly queued: number
  readonly succeeded: number
  readonly failed: number
  /** items whose run was cancelled while it was queued (`gligabao runs cancel`): nothing stored */
  readonly cancelled: number
  /** the first failures, with their item */
  readonly errors: ReadonlyArray<{ readonly source: string; readonly error: string }>
  /** set when a signal stopped the import */
  readonly interrupted?: NodeJS.Signals
  /** after a signal: items queued whose run had not ended (they run later, or can be cancelled) */
  readonly still_queued?: number
  /** after a signal: items never queued (importing again queues them) */
  readonly not_queued?: number
}

/** Where the import queued, for the summary after a signal. */
export interface Queuing {
  readonly queued: number
  /** items handed to the queue (their runs may be old ones a key named) */
  readonly submitted: number
  /** the dataset the runs went to (the batch's, default main) */
  readonly dataset: string
}

/**
 * Counts what finished and shows the progress line on stderr: redrawn twice a second on a
 * terminal, otherwise printed every PROGRESS_LINE_EVERY_MS (and at the end).
 */
const trackerOf = (total: number) => {
  const startedMs = Date.now()
  const tty = process.stderr.isTTY === true
  let done = 0
  let failed = 0
  let cancelled = 0
  const errors: Array<{ source: string; error: string }> = []
  const line = () => importProgress(done, failed, total, Date.now() - startedMs, cancelled)
  const timer = setInterval(
    () => process.stderr.write(tty ? `\r${line()}` : `${line()}\n`),
    tty ? 500 : PROGRESS_LINE_EVERY_MS
  )
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    clearInterval(timer)
    process.stderr.write(tty ? `\r${line()}\n` : `${line()}\n`)
  }
  return {
    succeeded: () => {
      done++
    },
    failed: (source: string, error: string) => {
      done++
      failed++
      if (errors.length < 20) errors.push({ source, error })
    },
    cancelled: () => {
      done++
      cancelled++
    },
    stop,
    finish: (queuing: Queuing, signal: Option.Option<NodeJS.Signals>): ImportSummary => {
      stop()
      const summary = {
        items: total,
        queued: queuing.queued,
        succeeded: done - failed - cancelled,
        failed,
        cancelled,
        errors
      }
      return Option.match(signal, {
        onNone: () => summary,
        onSome: (interrupted) => ({
          ...summary,
          interrupted,
          still_queued: Math.max(0, queuing.submitted - done),
          not_queued: total - queuing.submitted
        })
      })
    }
  }
}
type Tracker = ReturnType<typeof trackerOf>

/** The tracker for the import's scope: its line stops whatever ends the import. */
const tracker = (total: number) =>
  Effect.acquireRelease(Effect.sync(() => trackerOf(total)), (t) => Effect.sync(t.stop))

/**
 * A run's outcome counted: succeeded, failed (with its error), or cancelled (the only Conflict a
 * run ends with). An interrupted wait (the manager shut down before the run's turn) is not done.
 */
const counted = (
  progress: Tracker,
  source: string,
  wait: Effect.Effect<unknown, RememberError>,
  stop: StopRequest
) =>
  Effect.flatMap(Effect.exit(wait), (exit) =>
    Effect.gen(function*() {
      if (Exit.isSuccess(exit)) return progress.succeeded()
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure)) {
        return failure.value._tag === "Conflict" ? progress.cancelled() : progress.failed(source, failure.value.message)
      }
      // cut short by the shutdown a signal began: the run is still queued
      if (Cause.isInterruptedOnly(exit.cause) || Option.isSome(yield* stop.signal)) return
      progress.failed(source, `internal error: ${Cause.pretty(exit.cause).split("\n")[0]}`)
    }))

/**
 * Runs `program` with the manager of this process over the configured database (main.ts builds
 * it); `target` names that database for `gligabao runs cancel`. The manager shuts down when the
 * program ends: runs in flight finish, queued ones stay queued.
 */
export type LocalApp<R> = <A, E>(
  program: (target: CancelTarget) => Effect.Effect<A, E, RememberManager>
) => Effect.Effect<A, unknown, R>

/**
 * Imports through the manager of this process, waiting for every run. After a signal it queues no
 * more batches and stops waiting: the manager then shuts down (a run already started finishes,
 * the queued ones stay queued for the next start), and the summary counts what ended.
 */
export const importLocally = <R>(
  inApp: LocalApp<R>,
  items: ReadonlyArray<ImportItem>,
  options: ImportOptions,
  stop: StopRequest
) =>
  Effect.gen(function*() {
    const progress = yield* tracker(items.length)
    // the waits outlive the manager: they get the answers its shutdown gives
    const waits = yield* FiberSet.make<void>()
    const { queuing, target } = yield* inApp((target) =>
      Effect.gen(function*() {
        const manager = yield* RememberManager
        let queuing: Queuing = { queued: 0, submitted: 0, dataset: options.dataset ?? DEFAULT_DATASET }
        for (const batch of batchesOf(items)) {
          if (Option.isSome(yield* stop.signal)) break
          const decoded = validateRememberBatch({
            user_id: options.userId,
            dataset: options.dataset,
            items: batch.map((b) => b.item)
          })
          if (Either.isLeft(decoded)) return yield* Effect.fail(new Error(decoded.left.message))
          const runs = yield* manager.acceptMany(decoded.right.items.map((item) => ({
            request: { ...item, user_id: decoded.right.user_id, dataset: decoded.right.dataset },
            idempotencyKey: item.idempotency_key
          }))).pipe(
            Effect.mapError(({ error, index }) => new Error(`${batch[index]!.source}: ${error.message}`))
          )
          queuing = {
            queued: queuing.queued + runs.filter((r) => r.created).length,
            submitted: queuing.submitted + batch.length,
            dataset: decoded.right.dataset
          }
          for (const [i, run] of runs.entries()) {
            yield* FiberSet.run(waits, counted(progress, batch[i]!.source, run.await, stop))
          }
        }
        yield* Effect.raceFirst(FiberSet.awaitEmpty(waits), stop.await)
        return { queuing, target }
      })
    )
    // the manager has shut down: every wait has its answer (a queued run's is an interruption)
    yield* FiberSet.awaitEmpty(waits)
    return { summary: progress.finish(queuing, yield* stop.signal), queuing, target }
  }).pipe(Effect.scoped)

/** A request to a gligabao server: its status, its body as JSON (undefined when it is not) and as text. */
export const fetchJson = (url: string, init: RequestInit) =>
  Effect.tryPromise({
    try: async () => {
      const res = await fetch(url, init)
      const text = await res.text()
      let json: any
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
      return { status: res.status, json, text }
    },
    catch: (e) => new Error(`${url}: ${e instanceof Error ? e.message : String(e)}`)
  })

/**
 * Imports against a running server: the batch endpoint, then `GET /v1/gb/runs/{id}` until every
 * run ended. After a signal it queues no more batches and stops polling; the server goes on
 * running what was queued.
 */
export const importRemotely = (
  baseUrl: string,
  token: string | undefined,
  items: ReadonlyArray<ImportItem>,
  options: ImportOptions,
  stop: StopRequest
) =>
  Effect.gen(function*() {
    const base = baseUrl.replace(/\/+$/, "")
    const headers: Record<string, string> = {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    }
    const progress = yield* tracker(items.length)
    let queuing: Queuing = { queued: 0, submitted: 0, dataset: options.dataset ?? DEFAULT_DATASET }
    const pending = new Map<number, string>()
    for (const batch of batchesOf(items)) {
      if (Option.isSome(yield* stop.signal)) break
      const res = yield* fetchJson(`${base}/v1/gb/remember/batch`, {
        method: "POST",
        headers,
        body: JSON.stringify({ user_id: options.userId, dataset: options.dataset, items: batch.map((b) => b.item) })
      })
      if (res.status !== 202) {
        const message = typeof res.json?.error === "string" ? res.json.error : res.text.slice(0, 200)
        return yield* Effect.fail(new Error(`the server answered ${res.status}: ${message}`))
      }
      const runs = res.json.runs as ReadonlyArray<{ remember_run_id: number; status: string }>
      runs.forEach((run, i) => {
        if (run.status === "queued") queuing = { ...queuing, queued: queuing.queued + 1 }
        pending.set(run.remember_run_id, batch[i]!.source)
      })
      queuing = { ...queuing, submitted: queuing.submitted + batch.length }
    }
    // a key of an earlier import names its run: counted once, even when two items share it
    while (pending.size > 0 && Option.isNone(yield* stop.signal)) {
      yield* Effect.forEach([...pending], ([id, source]) =>
        Effect.gen(function*() {
          const run = yield* fetchJson(`${base}/v1/gb/runs/${id}`, { headers })
          if (run.status !== 200) return yield* Effect.fail(new Error(`GET /v1/gb/runs/${id} answered ${run.status}`))
          if (run.json.status === "succeeded") progress.succeeded()
          else if (run.json.status === "failed") progress.failed(source, String(run.json.error))
          else if (run.json.status === "cancelled") progress.cancelled()
          else return
          pending.delete(id)
        }), { concurrency: 8, discard: true })
      if (pending.size > 0) yield* Effect.raceFirst(Effect.sleep("250 millis"), Effect.asVoid(stop.await))
    }
    const summary = progress.finish(queuing, yield* stop.signal)
    // the runs the server has not ended (items that share a key share their run)
    return {
      summary: summary.still_queued === undefined ? summary : { ...summary, still_queued: pending.size },
      queuing
    }
  }).pipe(Effect.scoped)
