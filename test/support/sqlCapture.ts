/**
 * What the repositories really run on SQLite, for query-plan tests: every SQL text
 * better-sqlite3 prepares and runs while a capture is on, and the plan SQLite gives for it.
 */
import { SqlClient } from "@effect/sql"
import Sqlite from "better-sqlite3"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"

/** Hooks better-sqlite3's statements for the calling file (installed in beforeAll, removed in afterAll). */
export const sqlCapture = () => {
  const captured: Array<string> = []
  let capturing = false
  const statement = Object.getPrototypeOf(new Sqlite(":memory:").prepare("SELECT 1"))
  const originals = Object.fromEntries(["all", "run", "get"].map((m) => [m, statement[m]]))
  beforeAll(() => {
    for (const [name, original] of Object.entries(originals)) {
      statement[name] = function(this: { source: string }, ...args: Array<unknown>) {
        if (capturing) captured.push(this.source)
        return original.apply(this, args)
      }
    }
  })
  afterAll(() => Object.assign(statement, originals))
  return {
    /** the texts run since the last `start` */
    captured,
    start: () => {
      captured.length = 0
      capturing = true
    },
    stop: (): ReadonlyArray<string> => {
      capturing = false
      return [...captured]
    }
  }
}

/** SQLite's plan of a statement, its lines joined (every parameter bound to null). */
export const planOf = (query: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const params = (query.match(/\?/g) ?? []).map(() => null)
    return (yield* sql.unsafe<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`, params)).map((r) => r.detail).join(
      "\n"
    )
  }).pipe(Effect.orDie)
