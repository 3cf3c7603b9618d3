/**
 * The pure parts of cancelling (issue 41, item 5): a cancelled run's events and outcome, the
 * command line a stopped import prints (quoted for a shell, no secret in it), its message, and
 * the progress line.
 */
import { Either, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { stoppedMessage } from "../../src/cli/importCommand.js"
import { importProgress } from "../../src/cli/progress.js"
import { cancelCommandLine, cancelledLine, shellWord, storageTargetFor } from "../../src/cli/runs.js"
import { exitCodeOf } from "../../src/cli/signals.js"
import type { AppConfig } from "../../src/Config.js"
import { statusOf } from "../../src/domain/Errors.js"
import type { RunWithStages } from "../../src/domain/Rows.js"
import { compareEventIds, diffRun, eventId, isFinished } from "../../src/domain/runEvents.js"
import { outcomeOf } from "../../src/pipeline/runOutcome.js"
import { shellWords } from "./world.js"

const run = (over: Partial<RunWithStages>): RunWithStages => ({
  id: 7,
  pipeline: "text",
  user_id: "alice",
  dataset: "main",
  dataset_id: null,
  artifact_id: null,
  status: "queued",
  error: null,
  params: {},
  queued_at: "2026-01-01T00:00:00.000Z",
  instance_id: "i",
  started_at: null,
  finished_at: null,
  duration_ms: null,
  attempts: 0,
  response: null,
  error_tag: null,
  stages: [],
  ...over
})

const cancelled = run({ status: "cancelled", finished_at: "2026-01-01T00:00:05.000Z" })

describe("a cancelled run", () => {
  it("is finished: its stream ends with a cancelled event, after queued and never started", () => {
    expect(isFinished(cancelled)).toBe(true)
    const queued = run({})
    expect(diffRun(undefined, queued).map((e) => e.event)).toEqual(["queued"])
    const events = diffRun(queued, cancelled)
    expect(events.map((e) => e.event)).toEqual(["cancelled"])
    expect(events[0]!.data).toMatchObject({ id: 7, status: "cancelled" })
    // after the queued event's id: a reconnect after `queued` is sent `cancelled`
    expect(compareEventIds(eventId(events[0]!, cancelled), "0.0.0.0")).toBeGreaterThan(0)
    // a stream opened on it sends the final event only
    expect(diffRun(undefined, cancelled).map((e) => e.event)).toEqual(["cancelled"])
  })

  it("answers its waiters a 409 that says nothing was stored", () => {
    const outcome = Option.getOrThrow(outcomeOf(cancelled))
    expect(Either.isLeft(outcome)).toBe(true)
    const error = Either.getLeft(outcome).pipe(Option.getOrThrow)
    expect(error._tag).toBe("Conflict")
    expect(statusOf(error)).toBe(409)
    expect(error.message).toBe("remember run 7 was cancelled before it started: nothing of it was stored")
  })
})

const config = (url: string | undefined, path = "data/x.db") =>
  ({
    database: {
      url: url === undefined ? Option.none() : Option.some(Redacted.make(url)),
      path,
      mmapSize: 0
    }
  }) as unknown as AppConfig

describe("the cancel command a stopped import prints", () => {
  it("quotes what a shell would split or expand, and reads back as the same words", () => {
    for (const word of ["alice", "my notes", "it's", "$HOME", "a;b", "ünï", "", "--db", "/tmp/x y/z.db"]) {
      expect(shellWords(shellWord(word)), word).toEqual(word === "" ? [""] : [word])
    }
    expect(shellWord("alice")).toBe("alice")
    expect(shellWord("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080")
    expect(shellWord("my notes")).toBe("'my notes'")
  })

  it("names the database as configured: a SQLite file by its absolute path, a PostgreSQL URL without its password", () => {
    const sqlite = storageTargetFor(config(undefined))
    expect(sqlite.args[0]).toBe("--db")
    expect(sqlite.args[1]).toMatch(/^\/.*data\/x\.db$/)
    expect(sqlite.placeholder).toBeUndefined()
    expect(storageTargetFor(config("postgres://gb@db.internal:5432/mem"))).toEqual({
      args: ["--database-url", "postgres://gb@db.internal:5432/mem"]
    })
    const secret = storageTargetFor(config("postgresql://gb:s3cr%40t@db.internal/mem?sslmode=require"))
    expect(secret.args).toEqual(["--database-url", "postgresql://gb:PASSWORD@db.internal/mem?sslmode=require"])
    expect(JSON.stringify(secret)).not.toContain("s3cr")
    expect(secret.placeholder).toContain("PASSWORD")
  })

  it("is the runs cancel command of the user's dataset, and the message counts what was done and what waits", () => {
    const target = { args: ["--db", "/data/my db.db"] }
    const line = cancelCommandLine("alice", "my notes", target)
    expect(line).toBe("gligabao runs cancel --user-id alice --dataset 'my notes' --queued --db '/data/my db.db'")
    const summary = {
      items: 200,
      queued: 200,
      succeeded: 57,
      failed: 3,
      cancelled: 0,
      errors: [],
      interrupted: "SIGINT" as const,
      still_queued: 140,
      not_queued: 0
    }
    expect(stoppedMessage(summary, "alice", "my notes", target, undefined).split("\n")).toEqual([
      "gligabao import stopped by SIGINT: 60 of 200 items done (3 failed).",
      "140 still queued: they run at the next start of gligabao on this database (serve, import, remember, mcp, eval).",
      `To cancel them (every queued run of alice in my notes): ${line}`
    ])
    const remote = stoppedMessage(
      { ...summary, still_queued: 0, not_queued: 140 },
      "alice",
      "main",
      { args: ["--url", "http://h:1"] },
      "http://h:1"
    )
    expect(remote.split("\n")).toEqual([
      "gligabao import stopped by SIGINT: 60 of 200 items done (3 failed).",
      "Nothing of it is still queued.",
      "140 not queued: importing again queues them (and does nothing twice)."
    ])
    expect(exitCodeOf("SIGINT")).toBe(130)
    expect(exitCodeOf("SIGTERM")).toBe(143)
  })

  it("runs cancel says what it cancelled and what had started", () => {
    expect(cancelledLine({ cancelled: [4, 5], started: [3] }, "alice", "notes")).toBe(
      "cancelled 2 queued runs of alice in notes; 1 already started, not cancelled (a started run runs to its end): 3"
    )
    expect(cancelledLine({ cancelled: [], started: [] }, "bob", undefined)).toBe("no queued run of bob to cancel")
  })
})

describe("the import's progress line", () => {
  it("counts the cancelled items only when there are some", () => {
    expect(importProgress(40, 3, 200, 10_000)).toBe("40/200 items done, 3 failed, 4.0 items/s")
    expect(importProgress(40, 3, 200, 10_000, 2)).toBe("40/200 items done, 3 failed, 2 cancelled, 4.0 items/s")
  })
})
