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
import { Effect, Either } from "effect"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { BATCH_BODY_LIMIT, MAX_BATCH_ITEMS, validateRememberBatch } from "../domain/Remember.js"
import type { RememberManager } from "../pipeline/RememberManager.js"
import { importProgress } from "./progress.js"

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
  /** the first failures, with their item */
  readonly errors: ReadonlyArray<{ readonly source: string; readonly error: string }>
}

/** Counts what finished and redraws the progress line on stderr. */
const tracker = (total: number) => {
  const startedMs = Date.now()
  let done = 0
  let failed = 0
  const errors: Array<{ source: string; error: string }> = []
  const draw = (final = false) => {
    const line = importProgress(done, failed, total, Date.now() - startedMs)
    if (process.stderr.isTTY) process.stderr.write(`\r${line}${final ? "\n" : ""}`)
    else if (final) process.stderr.write(`${line}\n`)
  }
  const timer = setInterval(() => draw(), 500)
  return {
    succeeded: () => {
      done++
    },
    failed: (source: string, error: string) => {
      done++
      failed++
      if (errors.length < 20) errors.push({ source, error })
    },
    finish: (queued: number): ImportSummary => {
      clearInterval(timer)
      draw(true)
      return { items: total, queued, succeeded: done - failed, failed, errors }
    }
  }
}

/** Imports through the manager of this process (the configured database), waiting for every run. */
export const importLocally = (
  manager: RememberManager["Type"],
  items: ReadonlyArray<ImportItem>,
  options: ImportOptions
) =>
  Effect.gen(function*() {
    const progress = tracker(items.length)
    let queued = 0
    const waits: Array<Effect.Effect<void>> = []
    for (const batch of batchesOf(items)) {
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
      queued += runs.filter((r) => r.created).length
      runs.forEach((run, i) =>
        waits.push(run.await.pipe(
          Effect.match({
            onFailure: (e) => progress.failed(batch[i]!.source, e.message),
            onSuccess: () => progress.succeeded()
          })
        ))
      )
    }
    yield* Effect.all(waits, { concurrency: "unbounded", discard: true })
    return progress.finish(queued)
  })

const fetchJson = (url: string, init: RequestInit) =>
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

/** Imports against a running server: the batch endpoint, then `GET /v1/gb/runs/{id}` until every run finished. */
export const importRemotely = (
  baseUrl: string,
  token: string | undefined,
  items: ReadonlyArray<ImportItem>,
  options: ImportOptions
) =>
  Effect.gen(function*() {
    const base = baseUrl.replace(/\/+$/, "")
    const headers: Record<string, string> = {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    }
    const progress = tracker(items.length)
    let queued = 0
    const pending = new Map<number, string>()
    for (const batch of batchesOf(items)) {
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
        if (run.status === "queued") queued++
        pending.set(run.remember_run_id, batch[i]!.source)
      })
    }
    // a key of an earlier import names its run: counted once, even when two items share it
    while (pending.size > 0) {
      yield* Effect.forEach([...pending], ([id, source]) =>
        Effect.gen(function*() {
          const run = yield* fetchJson(`${base}/v1/gb/runs/${id}`, { headers })
          if (run.status !== 200) return yield* Effect.fail(new Error(`GET /v1/gb/runs/${id} answered ${run.status}`))
          if (run.json.status === "succeeded") progress.succeeded()
          else if (run.json.status === "failed") progress.failed(source, String(run.json.error))
          else return
          pending.delete(id)
        }), { concurrency: 8, discard: true })
      if (pending.size > 0) yield* Effect.sleep("250 millis")
    }
    return progress.finish(queued)
  })
