/**
 * The program of `gligabao import` (main.ts declares its options; import.ts does the queuing):
 * the items read and validated, imported locally or through a server, the summary printed.
 *
 * Ctrl-C (or SIGTERM) stops it cleanly (signals.ts): no more items are queued, a run already
 * started finishes, and it prints how many items were done, how many are still queued and the
 * exact command that cancels them, then exits 130 (143 for SIGTERM). A second Ctrl-C quits at once.
 */
import { Cause, Effect, Exit, Option } from "effect"
import { importLocally, type ImportOptions, importRemotely, type ImportSummary, type LocalApp } from "./import.js"
import { readImportItems, validateItems } from "./import.js"
import { cancelCommandLine, type CancelTarget } from "./runs.js"
import { stoppable } from "./signals.js"

export interface ImportArgs extends ImportOptions {
  readonly path: string
}

/** Into this process's manager over the configured database, or through a running server. */
export type ImportVia<R> =
  | { readonly _tag: "Local"; readonly inApp: LocalApp<R> }
  | {
    readonly _tag: "Remote"
    readonly url: string
    readonly token: string | undefined
    /** the token came from --token (it is never printed), not from $GLIGABAO_TOKEN */
    readonly tokenFlag: boolean
  }

interface Imported {
  readonly summary: ImportSummary
  readonly dataset: string
  readonly target: CancelTarget
}

/** `runs cancel` through the same server: a token given on the command line is left as a placeholder. */
const remoteTarget = (url: string, tokenFlag: boolean): CancelTarget =>
  tokenFlag
    ? { args: ["--url", url, "--token", "TOKEN"], placeholder: "put the token in place of TOKEN" }
    : { args: ["--url", url] }

/** What the import says on stderr when a signal stopped it. */
export const stoppedMessage = (
  summary: ImportSummary,
  userId: string,
  dataset: string,
  target: CancelTarget,
  remote: string | undefined
): string => {
  const done = summary.succeeded + summary.failed + summary.cancelled
  const detail = [
    ...(summary.failed > 0 ? [`${summary.failed} failed`] : []),
    ...(summary.cancelled > 0 ? [`${summary.cancelled} cancelled`] : [])
  ]
  const queued = summary.still_queued ?? 0
  const notQueued = summary.not_queued ?? 0
  return [
    `gligabao import stopped by ${summary.interrupted ?? "a signal"}: ${done} of ${summary.items} items done${
      detail.length === 0 ? "" : ` (${detail.join(", ")})`
    }.`,
    ...(queued === 0
      ? ["Nothing of it is still queued."]
      : [
        remote === undefined
          ? `${queued} still queued: they run at the next start of gligabao on this database (serve, import, remember, mcp, eval).`
          : `${queued} still queued on ${remote}: the server goes on running them.`
      ]),
    ...(notQueued === 0 ? [] : [`${notQueued} not queued: importing again queues them (and does nothing twice).`]),
    ...(queued === 0 ? [] : [
      `To cancel them (every queued run of ${userId} in ${dataset}): ${cancelCommandLine(userId, dataset, target)}${
        target.placeholder === undefined ? "" : ` (${target.placeholder})`
      }`
    ])
  ].join("\n")
}

/** Runs the import; the summary goes to stdout, and an item that failed or was cancelled fails the command. */
export const runImport = <R>(args: ImportArgs, via: ImportVia<R>) =>
  stoppable(
    (stop) =>
      Effect.gen(function*() {
        const items = yield* readImportItems(args.path, args)
        yield* validateItems(items, args)
        if (via._tag === "Remote") {
          const { queuing, summary } = yield* importRemotely(via.url, via.token, items, args, stop)
          return { summary, dataset: queuing.dataset, target: remoteTarget(via.url, via.tokenFlag) } satisfies Imported
        }
        const { queuing, summary, target } = yield* importLocally(via.inApp, items, args, stop)
        return { summary, dataset: queuing.dataset, target } satisfies Imported
      }),
    {
      notice: (signal) =>
        process.stderr.write(
          `${process.stderr.isTTY ? "\n" : ""}${signal}: stopping; no more items are queued${
            via._tag === "Local" ? ", the runs already started finish first" : ""
          } (${signal === "SIGINT" ? "Ctrl-C" : "the signal"} again quits at once)\n`
        ),
      report: (exit, signal) =>
        Exit.match(exit, {
          onFailure: (cause) =>
            Effect.sync(() => {
              const failure = Cause.failureOption(cause)
              const message = Option.isSome(failure) && failure.value instanceof Error
                ? failure.value.message
                : Cause.pretty(cause).split("\n")[0]
              console.error(`gligabao: ${message} (stopped by ${signal})`)
            }),
          onSuccess: ({ dataset, summary, target }) =>
            Effect.sync(() => {
              console.log(JSON.stringify(summary, null, 2))
              console.error(
                stoppedMessage(summary, args.userId, dataset, target, via._tag === "Remote" ? via.url : undefined)
              )
            })
        })
    }
  ).pipe(
    Effect.flatMap(({ summary }) =>
      Effect.gen(function*() {
        console.log(JSON.stringify(summary, null, 2))
        const problems = [
          ...(summary.failed > 0 ? [`${summary.failed} of ${summary.items} items failed`] : []),
          ...(summary.cancelled > 0 ? [`${summary.cancelled} of ${summary.items} items were cancelled`] : [])
        ]
        if (problems.length > 0) return yield* Effect.fail(new Error(problems.join("; ")))
      })
    )
  )
