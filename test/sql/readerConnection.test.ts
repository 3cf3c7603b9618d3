/**
 * On a SQLite file the read programs' SearchRepo runs on a read-only connection of its own: a
 * read answers while another request's transaction is open on the writer's connection (the
 * writer's client serializes every statement behind an open transaction), and it sees only what
 * is committed.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteLive } from "../../layers/sql/index.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"

const NOW = "2025-01-01T00:00:00.000Z"

describe("SQLite reader connection", () => {
  it.scoped(
    "a read answers while a write transaction is open, and sees only committed rows",
    () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "gligabao-reader-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
        yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const datasets = yield* DatasetsRepo
          const search = yield* SearchRepo
          yield* datasets.getOrCreate("alice", "committed", NOW)

          const written = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const writer = yield* sql.withTransaction(
            Effect.gen(function*() {
              yield* datasets.getOrCreate("alice", "uncommitted", NOW)
              yield* Deferred.succeed(written, undefined)
              yield* Deferred.await(release)
            })
          ).pipe(Effect.fork)
          yield* Deferred.await(written)

          // on the writer's connection this would wait for the transaction; the timeout says it did not
          const committed = yield* search.dataset("alice", "committed").pipe(Effect.timeout("5 seconds"))
          const uncommitted = yield* search.dataset("alice", "uncommitted").pipe(Effect.timeout("5 seconds"))
          expect(Option.map(committed, (d) => d.name)).toEqual(Option.some("committed"))
          expect(Option.isNone(uncommitted)).toBe(true)

          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(writer)
          expect(Option.isSome(yield* search.dataset("alice", "uncommitted"))).toBe(true)
        }).pipe(Effect.provide(SqliteLive(join(dir, "reader.db"))))
      }),
    30_000
  )

  it.scoped("in memory (no second connection to the same database) the read shares the writer's", () =>
    Effect.gen(function*() {
      const datasets = yield* DatasetsRepo
      const search = yield* SearchRepo
      yield* datasets.getOrCreate("alice", "main", NOW)
      expect(Option.isSome(yield* search.dataset("alice", "main"))).toBe(true)
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})
