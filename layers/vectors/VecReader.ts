/**
 * A second, read-only connection to a sqlite-vec file, in a worker thread, for vector searches.
 *
 * better-sqlite3 is synchronous: on the one connection a server has, a vector search (a scan of
 * a partition's binary codes) holds the event loop, and a search's
 * full-text queries wait for it. On a connection of its own in a worker thread, the scan runs
 * on another core while the main thread answers the full-text queries, other requests and the
 * pipeline. WAL lets the reader and the writer work at once; the reader sees what is committed
 * (each statement its own read transaction), which is all a search or a similarity lookup asks.
 *
 * The worker is plain CommonJS evaluated from a string (so it runs the same under tsx, vitest
 * and the compiled build) and only runs SELECTs (`PRAGMA query_only`), one at a time, with its
 * prepared statements cached by text. A message may carry several (a remember's similarity
 * lookups, a search's indexes): one round trip instead of one each. If the worker dies, pending and later queries fail with
 * its error; the store then answers on its main connection instead (see SqliteVecStore).
 */
import { Data, Deferred, Effect, Runtime, type Scope } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import * as sqliteVec from "sqlite-vec"

export class VecReaderFailed extends Data.TaggedError("VecReaderFailed")<{ readonly message: string }> {}

/** One SELECT and its parameters. */
export interface VecStatement {
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
}

export interface VecReader {
  /** The rows of one SELECT, run on the worker's connection. */
  readonly all: <A>(sql: string, params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<A>, VecReaderFailed>
  /** The rows of each SELECT, in order, run one after another in one message to the worker (absent: `all` each). */
  readonly allMany?: <A>(
    statements: ReadonlyArray<VecStatement>
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<A>>, VecReaderFailed>
  /** false once the worker has died: the caller should read elsewhere */
  readonly alive: () => boolean
}

export interface VecReaderOptions {
  /** PRAGMA mmap_size for the reader's connection, in bytes (0: none) */
  readonly mmapBytes: number
}

const WORKER_SOURCE = `
"use strict"
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.betterSqlite3)
const db = new Database(workerData.filename, { fileMustExist: true })
db.pragma("busy_timeout = 5000")
// it deletes nothing (query_only), but no connection of the server goes without it
db.pragma("secure_delete = ON")
db.pragma("query_only = 1")
if (workerData.mmapBytes > 0) db.pragma("mmap_size = " + Math.floor(workerData.mmapBytes))
db.loadExtension(workerData.extension)
const statements = new Map()
const rowsOf = ({ sql, params }) => {
  let statement = statements.get(sql)
  if (statement === undefined) {
    statement = db.prepare(sql)
    statements.set(sql, statement)
  }
  // a Buffer arrives as a plain Uint8Array, which better-sqlite3 does not bind
  const bound = params.map((p) => (p instanceof Uint8Array ? Buffer.from(p.buffer, p.byteOffset, p.byteLength) : p))
  return statement.all(...bound)
}
parentPort.on("message", ({ id, batch }) => {
  try {
    parentPort.postMessage({ id, rows: batch.map(rowsOf) })
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) })
  }
})
parentPort.postMessage({ ready: true })
`

type Reply = { readonly id: number; readonly rows?: ReadonlyArray<ReadonlyArray<unknown>>; readonly error?: string } | {
  readonly ready: true
}

/** Starts the worker on `filename` (which must exist, in WAL mode) and stops it with the scope. */
export const startVecReader = (
  filename: string,
  options: VecReaderOptions = { mmapBytes: 0 }
): Effect.Effect<VecReader, VecReaderFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const ready = yield* Deferred.make<void, VecReaderFailed>()
    const pending = new Map<number, (reply: { rows?: ReadonlyArray<ReadonlyArray<unknown>>; error?: string }) => void>()
    let nextId = 0
    let dead: string | null = null

    const worker = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new Worker(WORKER_SOURCE, {
          eval: true,
          // a bound on the worker's heap, which allocates little (rows of ids, distances and
          // metadata); not a memory saving (BENCHMARKS.md, notes moved out of the code)
          resourceLimits: { maxYoungGenerationSizeMb: 2 },
          workerData: {
            filename,
            mmapBytes: options.mmapBytes,
            betterSqlite3: createRequire(import.meta.url).resolve("better-sqlite3"),
            extension: sqliteVec.getLoadablePath()
          }
        })
      ),
      (worker) => Effect.promise(() => worker.terminate())
    )
    const die = (message: string) => {
      if (dead !== null) return
      dead = message
      Runtime.runSync(runtime)(Deferred.fail(ready, new VecReaderFailed({ message })))
      for (const resolve of pending.values()) resolve({ error: message })
      pending.clear()
    }
    worker.on("message", (reply: Reply) => {
      if ("ready" in reply) {
        Runtime.runSync(runtime)(Deferred.succeed(ready, undefined))
        return
      }
      const resolve = pending.get(reply.id)
      pending.delete(reply.id)
      if (pending.size === 0) worker.unref()
      resolve?.(reply)
    })
    worker.on("error", (error) => die(`the vector reader failed: ${error.message}`))
    worker.on("exit", (code) => die(`the vector reader stopped (exit code ${code})`))
    yield* Deferred.await(ready)
    // an idle reader must not keep the process alive; one with a query pending must (a one-shot
    // program awaiting only its answer would otherwise exit)
    worker.unref()

    const allMany = <A>(batch: ReadonlyArray<VecStatement>) =>
      Effect.async<ReadonlyArray<ReadonlyArray<A>>, VecReaderFailed>((resume) => {
        if (dead !== null) return resume(Effect.fail(new VecReaderFailed({ message: dead })))
        const id = nextId++
        if (pending.size === 0) worker.ref()
        pending.set(id, (reply) =>
          resume(
            reply.error !== undefined
              ? Effect.fail(new VecReaderFailed({ message: reply.error }))
              : Effect.succeed((reply.rows ?? []) as ReadonlyArray<ReadonlyArray<A>>)
          ))
        worker.postMessage({ id, batch })
        // an interrupted caller forgets its answer; the worker still finishes the statement
        return Effect.sync(() => {
          pending.delete(id)
          if (pending.size === 0) worker.unref()
        })
      })
    const all = <A>(sql: string, params: ReadonlyArray<unknown>) =>
      Effect.map(allMany<A>([{ sql, params }]), (rows) => rows[0] ?? [])
    return { all, allMany, alive: () => dead === null } satisfies VecReader
  })
