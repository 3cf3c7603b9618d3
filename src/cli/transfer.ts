/**
 * `gligabao dump` and `gligabao load` (docs/TRANSFER.md): the programs of src/transfer/ over a
 * gzip file, read and written as a stream. main.ts passes the layer they run over (the
 * composition root builds it from the configuration).
 *
 *   gligabao dump --to FILE [--user-id U [--dataset D]] [--no-vectors] [--db PATH | --database-url URL] [--image-dir DIR] [--config FILE]
 *   gligabao load --from FILE [--db PATH | --database-url URL] [--image-dir DIR] [--config FILE]
 *
 * `--to -` writes the dump to stdout and `--from -` reads it from stdin; a dump's summary then goes
 * to stderr (the logs always do), so that nothing else is ever in the dump. A dump is written to a
 * `.partial` file renamed when it is complete, so a file of the name is always a whole dump.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Exit, type Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { closeSync, createReadStream, createWriteStream, openSync, readSync, renameSync, rmSync } from "node:fs"
import { createInterface } from "node:readline"
import type { Readable, Writable } from "node:stream"
import { createGunzip, createGzip } from "node:zlib"
import { type AppConfig, GLIGABAO_VERSION, loadConfig } from "../Config.js"
import { dump } from "../transfer/dump.js"
import { load, type LoadPorts } from "../transfer/load.js"
import { configOption, databaseUrlOption, dbOption, flags, imageDirOption, stderrLoggingFor } from "./options.js"

const storage = { config: configOption, db: dbOption, databaseUrl: databaseUrlOption, imageDir: imageDirOption }

const reason = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** A gzip stream into the file (through a `.partial` name) or stdout: `write` waits while the stream is full. */
const gzipSink = (to: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const gzip = createGzip()
      const partial = to === "-" ? null : `${to}.${randomBytes(4).toString("hex")}.partial`
      const out: Writable = partial === null ? process.stdout : createWriteStream(partial, { flags: "wx" })
      let failed: Error | null = null
      const onError = (e: Error) => (failed ??= e)
      gzip.on("error", onError)
      out.on("error", onError)
      gzip.pipe(out, { end: partial !== null })
      return { gzip, out, partial, failed: () => failed }
    }),
    (sink, exit) =>
      Exit.isFailure(exit) && sink.partial !== null
        ? Effect.sync(() => {
          sink.gzip.destroy()
          sink.out.destroy()
          rmSync(sink.partial!, { force: true })
        })
        : Effect.void
  ).pipe(Effect.map((sink) => {
    const error = () => new Error(`cannot write ${sink.partial ?? "stdout"}: ${reason(sink.failed())}`)
    const write = (line: string) =>
      Effect.async<void, Error>((resume) => {
        if (sink.failed() !== null) return resume(Effect.fail(error()))
        if (sink.gzip.write(`${line}\n`)) return resume(Effect.void)
        const onDrain = () => (cleanup(), resume(Effect.void))
        const onError = () => (cleanup(), resume(Effect.fail(error())))
        const cleanup = () => {
          sink.gzip.off("drain", onDrain)
          sink.out.off("error", onError)
          sink.gzip.off("error", onError)
        }
        sink.gzip.once("drain", onDrain)
        sink.out.once("error", onError)
        sink.gzip.once("error", onError)
      })
    /** everything flushed and the file closed under its own name */
    const finish = Effect.async<void, Error>((resume) => {
      const done = () => {
        if (sink.failed() !== null) return resume(Effect.fail(error()))
        if (sink.partial !== null) renameSync(sink.partial, to)
        resume(Effect.void)
      }
      if (sink.partial === null) sink.gzip.once("end", () => process.stdout.write("", done))
      else sink.out.once("close", done)
      sink.out.once("error", () => resume(Effect.fail(error())))
      sink.gzip.end()
    })
    return { write, finish }
  }))

/** gzip unless the file's first bytes say otherwise (a dump unpacked to read it loads too) */
const isGzip = (file: string) => {
  const fd = openSync(file, "r")
  try {
    const head = Buffer.alloc(2)
    return readSync(fd, head, 0, 2, 0) < 2 || (head[0] === 0x1f && head[1] === 0x8b)
  } finally {
    closeSync(fd)
  }
}

/** The lines of the file (or stdin), one at a time. */
const lineSource = (from: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const raw: Readable = from === "-" ? process.stdin : createReadStream(from)
        const input = from === "-" || isGzip(from) ? raw.pipe(createGunzip()) : raw
        // a gunzip error (a damaged file) ends the reading with that error
        raw.on("error", (e) => input.destroy(e))
        const lines = createInterface({ input, crlfDelay: Infinity })
        return { raw, lines, iterator: lines[Symbol.asyncIterator]() }
      },
      catch: (e) => new Error(`cannot read ${from}: ${reason(e)}`)
    }),
    ({ lines, raw }) => Effect.sync(() => (lines.close(), raw.destroy()))
  ).pipe(Effect.map(({ iterator }) =>
    Effect.tryPromise({
      try: () => iterator.next(),
      catch: (e) => new Error(`cannot read ${from === "-" ? "stdin" : from}: ${reason(e)}`)
    }).pipe(Effect.map((r) => (r.done === true ? Option.none() : Option.some(r.value))))
  ))

/** The two commands over the layer `layerFor` builds from the configuration. */
export const transferCommands = <E>(layerFor: (config: AppConfig) => Layer.Layer<LoadPorts, E>) => {
  const dumpCommand = Command.make(
    "dump",
    {
      to: Options.text("to").pipe(Options.withDescription("the dump file to write (gzip JSON lines); - for stdout")),
      userId: Options.text("user-id").pipe(
        Options.withDescription("only this user's data (a GDPR access request); default: everything"),
        Options.optional
      ),
      dataset: Options.text("dataset").pipe(
        Options.withDescription("only this dataset name of --user-id (its soft-deleted rows too)"),
        Options.optional
      ),
      noVectors: Options.boolean("no-vectors").pipe(
        Options.withDescription("leave the vectors out (a smaller file; the load embeds again)")
      ),
      ...storage
    },
    (o) =>
      Effect.gen(function*() {
        if (Option.isSome(o.dataset) && Option.isNone(o.userId)) {
          return yield* Effect.fail(new Error("--dataset needs --user-id: a dataset name is a user's"))
        }
        // stdout is the dump's: anything else printed goes to stderr
        if (o.to === "-") console.log = console.error
        const config = yield* loadConfig(flags(o), process.env)
        const summary = yield* Effect.scoped(Effect.gen(function*() {
          const sink = yield* gzipSink(o.to)
          const done = yield* dump({
            userId: Option.getOrNull(o.userId),
            dataset: Option.getOrNull(o.dataset),
            vectors: !o.noVectors,
            gligabaoVersion: GLIGABAO_VERSION,
            embeddingModel: config.embeddingModel,
            embeddingDimensions: config.embeddingDimensions
          }, sink.write)
          yield* sink.finish
          return done
        })).pipe(Effect.provide(layerFor(config)), Effect.provide(stderrLoggingFor(config)))
        console.log(JSON.stringify({ to: o.to, ...summary }, null, 2))
      })
  ).pipe(
    Command.withDescription(
      "write everything, one user's or one dataset's memory to a portable, versioned file (docs/TRANSFER.md)"
    )
  )

  const loadCommand = Command.make(
    "load",
    {
      from: Options.text("from").pipe(Options.withDescription("the dump file to read; - for stdin")),
      ...storage
    },
    (o) =>
      Effect.gen(function*() {
        const config = yield* loadConfig(flags(o), process.env)
        const summary = yield* Effect.scoped(Effect.gen(function*() {
          const next = yield* lineSource(o.from)
          return yield* load(next, {
            embeddingDimensions: config.embeddingDimensions,
            embeddingModel: config.embeddingModel
          })
        })).pipe(Effect.provide(layerFor(config)), Effect.provide(stderrLoggingFor(config)))
        console.log(JSON.stringify({ from: o.from, ...summary }, null, 2))
        if (summary.refused.length > 0) {
          const names = summary.refused.map((g) => `${g.user_id}/${g.dataset}`).join(", ")
          return yield* Effect.fail(
            new Error(
              `${summary.refused.length} of the dump's datasets ${summary.refused.length === 1 ? "was" : "were"} ` +
                `refused (${names}): ${summary.refused[0]!.reason}`
            )
          )
        }
      })
  ).pipe(
    Command.withDescription(
      "load a dump into this database (SQLite or PostgreSQL), beside what it holds; no model call (docs/TRANSFER.md)"
    )
  )

  return [dumpCommand, loadCommand] as const
}
