/**
 * Databases for tests, so that a suite runs unchanged on SQLite and PostgreSQL:
 *
 *   forEachDialect((dialect, makeLayer) => {
 *     layer(makeLayer())("pipeline", (it) => { it.effect("...", () => ...) })   // one database for the block
 *     it.effect("...", () => program.pipe(Effect.provide(makeLayer())))          // one per test
 *   })
 *
 * Every `makeLayer()` is a fresh, migrated database: SQLite in memory, or a new database on the
 * run's PostgreSQL cluster (test/support/globalSetup.ts). Where PostgreSQL is not installed
 * (outside CI) the PostgreSQL blocks are skipped, loudly.
 *
 * A PostgreSQL lock that is contended between two storage layers (two "processes") is polled
 * on the Effect clock, so such tests need `it.live`, not `it.effect` (whose TestClock stands still).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, inject } from "vitest"
import { PgLive, SqliteLive, type Storage, type StorageError } from "../../layers/sql/index.js"
import { PgClientLive } from "../../layers/sql/Pg.js"

export type Dialect = "sqlite" | "pg"

export type StorageLayer = Layer.Layer<Storage, StorageError>

/** why PostgreSQL tests are skipped in this run, or null when they run */
export const pgSkipReason = (): string | null => inject("pgSkipReason")

const pgAdminUrl = (): string => {
  const url = inject("pgAdminUrl")
  if (url === null) throw new Error(`PostgreSQL is not available: ${pgSkipReason()}`)
  return url
}

/** A new, empty database on the test cluster; its URL (nothing is migrated yet). */
export const freshPgUrl: Effect.Effect<Redacted.Redacted<string>> = Effect.gen(function*() {
  const admin = new URL(pgAdminUrl())
  const name = `gb_test_${randomBytes(8).toString("hex")}`
  const sql = yield* SqlClient.SqlClient
  // an identifier cannot be a bound parameter; the name is ours, [a-z0-9_] only
  yield* sql.unsafe(`CREATE DATABASE ${name}`)
  admin.pathname = `/${name}`
  return Redacted.make(admin.toString())
}).pipe(
  Effect.provide(Layer.suspend(() => PgClientLive(Redacted.make(pgAdminUrl())))),
  Effect.orDie
)

/** A fresh migrated PostgreSQL database. */
export const pgLayer = (): StorageLayer => Layer.unwrapEffect(Effect.map(freshPgUrl, PgLive))

/** A fresh migrated in-memory SQLite database. */
export const sqliteLayer = (): StorageLayer => SqliteLive(":memory:")

/** A fresh migrated SQLite file (WAL and all), in a temp directory removed with the layer. */
export const sqliteFileLayer = (): StorageLayer =>
  Layer.unwrapScoped(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "gligabao-sqlite-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ).pipe(Effect.map((dir) => SqliteLive(join(dir, "gligabao.db"))))
  )

export interface DialectCase {
  readonly dialect: Dialect
  /** a fresh migrated database of this dialect per call */
  readonly makeLayer: () => StorageLayer
  /** set when this dialect cannot run here (PostgreSQL not installed, outside CI) */
  readonly skip: () => string | null
}

export const dialects: ReadonlyArray<DialectCase> = [
  { dialect: "sqlite", makeLayer: sqliteLayer, skip: () => null },
  { dialect: "pg", makeLayer: pgLayer, skip: pgSkipReason }
]

/** Declares `body` once per dialect, in a describe block named after it. */
export const forEachDialect = (body: (dialect: Dialect, makeLayer: () => StorageLayer) => void): void => {
  for (const { dialect, makeLayer, skip } of dialects) {
    const reason = skip()
    if (reason !== null) {
      console.warn(`!!! SKIPPING the ${dialect} tests: ${reason}`)
      describe.skip(dialect, () => body(dialect, makeLayer))
    } else {
      describe(dialect, () => body(dialect, makeLayer))
    }
  }
}
