/**
 * `gligabao runs cancel`: cancel queued remember runs (docs/INGESTION.md, Cancelling), on the
 * configured database or through a running server (--url):
 *
 *   gligabao runs cancel --user-id U [--dataset D] (--run ID | --queued) [--db PATH] [--database-url URL] [--config FILE] [--url URL] [--token T]
 *
 * It prints `{cancelled, started}` on stdout (the runs it cancelled, and those already started,
 * which run to their end) and says the same in words on stderr. On a database it opens the
 * storage only: a manager would take over the queued runs of a stopped import and run them, the
 * very runs it is asked to cancel.
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option, Redacted } from "effect"
import { resolve } from "node:path"
import type { AppConfig } from "../Config.js"
import { type CancelledRuns, CancelQueuedRequest, CancelRunRequest } from "../domain/runView.js"
import { decodeRequest } from "../domain/Wire.js"
import { cancelQueuedRuns, cancelRun } from "../pipeline/cancelRuns.js"
import { RunLogRepo } from "../services/RunLogRepo.js"
import { fetchJson } from "./import.js"

/** The storage flags main.ts declares for every command. */
export interface RunsStorageFlags {
  readonly config: Option.Option<string>
  readonly db: Option.Option<string>
  readonly databaseUrl: Option.Option<string>
}

/** What the runs commands need of main.ts: its storage options, and a way to run a program over the storage. */
export interface RunsCommandShared<R> {
  readonly options: { readonly [K in keyof RunsStorageFlags]: Options.Options<RunsStorageFlags[K]> }
  readonly run: <A, E>(
    flags: RunsStorageFlags,
    program: Effect.Effect<A, E, RunLogRepo>
  ) => Effect.Effect<A, unknown, R>
}

const decodeCancelRun = decodeRequest(CancelRunRequest)
const decodeCancelQueued = decodeRequest(CancelQueuedRequest)

/** A word as a POSIX shell reads it back: bare when it is plain, else single-quoted. */
export const shellWord = (word: string): string =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/** Flags that name a target, and whether a secret in them was replaced by a placeholder. */
export interface CancelTarget {
  readonly args: ReadonlyArray<string>
  readonly placeholder?: string | undefined
}

/**
 * The flags that name the configured database for `runs cancel`, from the loaded configuration
 * (so the command works from any directory). A password in a PostgreSQL URL is never printed.
 */
export const storageTargetFor = (config: AppConfig): CancelTarget =>
  Option.match(config.database.url, {
    onNone: () => ({ args: ["--db", resolve(config.database.path)] }),
    onSome: (secret) => {
      const url = Redacted.value(secret)
      const hidden = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, "$1:PASSWORD@")
      return { args: ["--database-url", hidden], ...(hidden === url ? {} : { placeholder: "PASSWORD" }) }
    }
  })

/** The exact command that cancels the user's queued runs of the dataset. */
export const cancelCommandLine = (userId: string, dataset: string, target: CancelTarget): string =>
  ["gligabao", "runs", "cancel", "--user-id", userId, "--dataset", dataset, "--queued", ...target.args]
    .map(shellWord)
    .join(" ")

/** The stderr line: what was cancelled, and what had started and runs to its end. */
export const cancelledLine = (done: CancelledRuns, userId: string, dataset: string | undefined): string => {
  const of = ` of ${userId}${dataset === undefined ? "" : ` in ${dataset}`}`
  const n = done.cancelled.length
  const head = n === 0 ? `no queued run${of} to cancel` : `cancelled ${n} queued run${n === 1 ? "" : "s"}${of}`
  const m = done.started.length
  return m === 0
    ? head
    : `${head}; ${m} already started, not cancelled (a started run runs to its end): ${done.started.join(", ")}`
}

/** Cancels through a server's endpoints: `POST /v1/gb/runs/{id}/cancel`, the queued ones found by `GET /v1/gb/runs`. */
const cancelRemotely = (
  baseUrl: string,
  token: string | undefined,
  userId: string,
  dataset: string | undefined,
  runId: number | undefined
) =>
  Effect.gen(function*() {
    const base = baseUrl.replace(/\/+$/, "")
    const headers: Record<string, string> = {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    }
    const failed = (status: number, json: any) =>
      new Error(typeof json?.error === "string" ? json.error : `the server answered ${status}`)
    const cancel = (id: number) =>
      fetchJson(`${base}/v1/gb/runs/${id}/cancel`, {
        method: "POST",
        headers,
        body: JSON.stringify({ user_id: userId })
      })
    if (runId !== undefined) {
      const res = yield* cancel(runId)
      if (res.status !== 200) return yield* Effect.fail(failed(res.status, res.json))
      return { cancelled: [runId], started: [] } satisfies CancelledRuns
    }
    /** Every run of the user (of the dataset) in this status, newest first, a page at a time. */
    const idsIn = (status: "queued" | "started") =>
      Effect.gen(function*() {
        const ids: Array<number> = []
        let before: number | null = null
        do {
          const params = new URLSearchParams({ user_id: userId, status, limit: "100" })
          if (dataset !== undefined) params.set("dataset", dataset)
          if (before !== null) params.set("before_id", String(before))
          const page = yield* fetchJson(`${base}/v1/gb/runs?${params}`, { headers })
          if (page.status !== 200) return yield* Effect.fail(failed(page.status, page.json))
          ids.push(...(page.json.runs as ReadonlyArray<{ id: number }>).map((r) => r.id))
          before = page.json.next_before_id
        } while (before !== null)
        return ids
      })
    const cancelled: Array<number> = []
    yield* Effect.forEach(yield* idsIn("queued"), (id) =>
      Effect.map(cancel(id), (res) => {
        // a 409: it started (or ended) since the list was read; the started ones are listed below
        if (res.status === 200) cancelled.push(id)
      }), { concurrency: 8, discard: true })
    const started = yield* idsIn("started")
    return {
      cancelled: cancelled.sort((a, b) => a - b),
      started: started.sort((a, b) => a - b)
    } satisfies CancelledRuns
  })

export const runsCommand = <R>(shared: RunsCommandShared<R>) => {
  const cancel = Command.make(
    "cancel",
    {
      userId: Options.text("user-id").pipe(Options.withDescription("the user whose runs are cancelled")),
      dataset: Options.text("dataset").pipe(
        Options.withDescription("with --queued: only this dataset's runs (default: every dataset of the user)"),
        Options.optional
      ),
      run: Options.integer("run").pipe(
        Options.withDescription("the run to cancel (remember_run_id)"),
        Options.optional
      ),
      queued: Options.boolean("queued").pipe(Options.withDescription("every queued run of the user (and dataset)")),
      url: Options.text("url").pipe(
        Options.withDescription(
          "a running server to cancel through (e.g. http://127.0.0.1:8080); default: the database"
        ),
        Options.optional
      ),
      token: Options.text("token").pipe(
        Options.withDescription("the bearer token for --url (default $GLIGABAO_TOKEN)"),
        Options.optional
      ),
      ...shared.options
    },
    (o) =>
      Effect.gen(function*() {
        if (Option.isSome(o.run) === o.queued) {
          return yield* Effect.fail(new Error("give --run ID (one run) or --queued (every queued run), one of them"))
        }
        const dataset = Option.getOrUndefined(o.dataset)
        const runId = Option.getOrUndefined(o.run)
        const done: CancelledRuns = yield* Option.match(o.url, {
          onSome: (url) =>
            cancelRemotely(url, Option.getOrUndefined(o.token) ?? process.env.GLIGABAO_TOKEN, o.userId, dataset, runId),
          onNone: () =>
            shared.run(
              o,
              Effect.gen(function*() {
                const runLog = yield* RunLogRepo
                if (runId !== undefined) {
                  const request = yield* decodeCancelRun({ user_id: o.userId })
                  const run = yield* cancelRun(runLog, { ...request, id: runId })
                  return { cancelled: [run.id], started: [] } satisfies CancelledRuns
                }
                return yield* cancelQueuedRuns(runLog, yield* decodeCancelQueued({ user_id: o.userId, dataset }))
              })
            )
        })
        console.log(JSON.stringify(done))
        console.error(cancelledLine(done, o.userId, runId === undefined ? dataset : undefined))
      })
  ).pipe(
    Command.withDescription(
      "cancel queued remember runs (--run ID, or --queued: all of the user's, or of --dataset); a started run finishes"
    )
  )

  return Command.make("runs").pipe(
    Command.withDescription("the remember runs of a database or a server (docs/INGESTION.md)"),
    Command.withSubcommands([cancel])
  )
}
