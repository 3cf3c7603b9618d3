/**
 * The PostgreSQL client (node-postgres pool) from a URL, migrated on build. BIGINT / BIGSERIAL
 * ids and counts come back as JS numbers, like on SQLite (see `typeParsers`).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { NodeContext } from "@effect/platform-node"
import { SqlClient, type SqlError } from "@effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Context, Effect, Layer, type Redacted } from "effect"
import { createRequire } from "node:module"
import { migrations } from "./migrations/index.js"
import { withPgAdvisoryLock } from "./PgAdvisoryLock.js"

type TypeParser = (value: string) => unknown
interface PgTypes {
  readonly getTypeParser: (oid: number, format?: string) => TypeParser
}

// node-postgres' own default parsers, from the very copy @effect/sql-pg uses (pg ships no types)
const requireFromSqlPg = createRequire(createRequire(import.meta.url).resolve("@effect/sql-pg"))
const pgDefaults = (requireFromSqlPg("pg") as { readonly types: PgTypes }).types

const INT8 = 20
const NUMERIC = 1700
const INT8_ARRAY = 1016
const FLOAT4_ARRAY = 1021

/**
 * A real[] of plain numbers (an embedding) split at its commas: node-postgres' generic array parser
 * reads it a character at a time, and at 1536 dimensions that was most of a vector search's time
 * (its candidates' vectors are rescored in the process). Anything else (NULLs, nested or quoted
 * elements) goes to the generic parser.
 */
const parseFloat4Array = (fallback: TypeParser): TypeParser => (value) =>
  /^\{[-+0-9.eE,]*\}$/.test(value)
    ? (value.length === 2 ? [] : value.slice(1, -1).split(",").map(Number))
    : fallback(value)

const toNumber: TypeParser = (value) => Number(value)

/**
 * int8 (ids, COUNT(*)) and numeric (SUM of int8) parse to number: ids stay far below 2^53, and
 * every row interface declares them as number. Everything else keeps node-postgres' defaults.
 */
export const typeParsers: PgTypes = {
  getTypeParser: (oid, format) => {
    if (format === undefined || format === "text") {
      if (oid === INT8 || oid === NUMERIC) return toNumber
      if (oid === FLOAT4_ARRAY) return parseFloat4Array(pgDefaults.getTypeParser(oid, format))
      if (oid === INT8_ARRAY) {
        const parseArray = pgDefaults.getTypeParser(oid, format)
        return (value) => (parseArray(value) as Array<string | null>).map((v) => (v === null ? null : Number(v)))
      }
    }
    return pgDefaults.getTypeParser(oid, format)
  }
}

/** The pool's options a caller may set (default: node-postgres' pool of 10). */
export interface PgOptions {
  readonly maxConnections?: number
  /** PgLive: the read programs' own pool (default PG_READ_CONNECTIONS) */
  readonly readConnections?: number
}

/** The client alone (no migrations). */
export const PgClientLive = (
  url: Redacted.Redacted<string>,
  options: PgOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const client = yield* PgClient.make({
        url,
        types: typeParsers,
        applicationName: "gligabao",
        ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections })
      })
      return Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    })
  ).pipe(Layer.provide(Reactivity.layer))

// processes starting together on one database would otherwise race to create the migrations table
const MigratorLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* withPgAdvisoryLock(sql, "gligabao/migrations")(
      PgMigrator.run({ loader: PgMigrator.fromRecord(migrations) })
    )
  })
).pipe(Layer.provide(NodeContext.layer))

/** The migrated client. */
export const PgMigratedLive = (
  url: Redacted.Redacted<string>,
  options: PgOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError | PgMigrator.MigrationError> =>
  MigratorLive.pipe(Layer.provideMerge(PgClientLive(url, options)))
