/**
 * Migration 0017 on both dialects, on a database the previous release made (every migration up
 * to 0016): every entity's name words, and those of its statements' other spellings, are filled
 * in (over more than one page of entities), so that a name is found by a word at once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import { PgLive, SqliteLive, type Storage } from "../../layers/sql/index.js"
import { migrations } from "../../layers/sql/migrations/index.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { tempDir } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { pgMigratedTo, sqliteMigratedTo } from "../support/migrated.js"

const before17 = Object.fromEntries(Object.entries(migrations).filter(([key]) => key < "0017"))
const T = "2025-01-01T00:00:00.000Z"
/** more entities than the migration reads in one page (500) */
const FILLER = 620

const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`INSERT INTO gb_datasets (id, user_id, name, created_at) VALUES (1, 'alice', 'main', '${T}')`)
  yield* sql.unsafe(`INSERT INTO gb_artifacts (id, dataset_id, kind, text, valid_at, created_at) VALUES
    (1, 1, 'knowledge', 'Bob J. knows Zoë.', '${T}', '${T}')`)
  const names = [...Array.from({ length: FILLER }, (_, i) => `Person ${i}`), "Zoë Martin", "Bob Jones"]
  for (let i = 0; i < names.length; i += 200) {
    const values = names.slice(i, i + 200).map((name, j) =>
      `(${i + j + 1}, 1, '${name}', '${name.toLowerCase()}', 'person', '', '${T}', '${T}')`
    )
    yield* sql.unsafe(`INSERT INTO gb_entities (id, dataset_id, name, name_key, type, description, created_at,
      updated_at) VALUES ${values.join(", ")}`)
  }
  // Bob Jones's statement spells him "Bob J." (an alias), Zoë's as her name
  yield* sql.unsafe(`INSERT INTO gb_entity_artifacts (entity_id, artifact_id, name, description) VALUES
    (${FILLER + 2}, 1, 'Bob J.', 'a friend'), (${FILLER + 1}, 1, 'Zoë Martin', '')`)
})

const found = (words: ReadonlyArray<string>) =>
  Effect.map(
    Effect.flatMap(SearchRepo, (search) => search.entitiesNamed(1, words, 10)),
    (rows) => rows.map((r) => ({ name: r.name, aliases: r.aliases }))
  )

const check = (before: Layer.Layer<SqlClient.SqlClient>, after: Layer.Layer<Storage, unknown>) =>
  Effect.gen(function*() {
    yield* seed.pipe(Effect.provide(before))
    yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* found(["zoe"])).toEqual([{ name: "Zoë Martin", aliases: [] }])
      expect(yield* found(["bob", "j"])).toEqual([{ name: "Bob Jones", aliases: ["Bob J."] }])
      expect(yield* found(["person", String(FILLER - 1)])).toEqual([{ name: `Person ${FILLER - 1}`, aliases: [] }])
      const [{ n }] = yield* sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM gb_entity_words`)
      // two words a filler, "zoe martin", "bob jones" and the alias's "j"
      expect(Number(n)).toBe(FILLER * 2 + 2 + 2 + 1)
    }).pipe(Effect.provide(after))
  }).pipe(Effect.orDie)

describe("migration 0017: entities by the words of their names", () => {
  it("SQLite: every entity's words and its aliases' are filled in", async () => {
    const dir = tempDir("gligabao-0017-")
    const file = `${dir.path}/old.db`
    const before = sqliteMigratedTo(file, before17)
    await Effect.runPromise(check(before, SqliteLive(file)))
    dir.remove()
  })

  it.skipIf(pgSkipReason() !== null)("PostgreSQL: every entity's words and its aliases' are filled in", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      const url = yield* freshPgUrl
      const before = pgMigratedTo(url, before17)
      yield* check(before, PgLive(url))
    }))
  })
})
