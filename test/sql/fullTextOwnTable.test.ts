/**
 * A dataset side past the row threshold moves to an FTS5 table of its own (FullText.ts,
 * docs/FULLTEXT-ENGINE.md): its searches give the same ids and scores as the shared table gives
 * for the same rows, before and after it moves and as it changes; a small dataset beside it is
 * unaffected; forgetting and erasing leave no trace. Two databases get the same writes: one with
 * the threshold lowered to 50 rows, one with the default (everything in the shared tables).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { type FullTextSide, makeFullTextIndex } from "../../layers/sql/FullText.js"
import { SqliteLive } from "../../layers/sql/index.js"
import { markerLocations, newMarker } from "../support/noTrace.js"

const THRESHOLD = 50
const WORDS = ["alice", "smith", "works", "paris", "river", "garden", "music", "paint", "train", "stone"]
const QUERIES: ReadonlyArray<ReadonlyArray<string>> = [
  ["alice"],
  ["smith", "works"],
  ["paris", "river", "alice"],
  ["stone", "nothingsuch"]
]
const T0 = "2025-01-01T00:00:00.000Z"

/** a deterministic text of a few words */
const textOf = (i: number, extra = "") =>
  [WORDS[i % 10], WORDS[(i * 7 + 3) % 10], WORDS[(i * 3 + 1) % 10], i % 4 === 0 ? WORDS[0] : "", extra].join(" ")
    .trim()

const open = Effect.gen(function*() {
  const context = yield* Layer.build(SqliteLive(":memory:"))
  return Context.get(context, SqlClient.SqlClient)
})

type Db = { readonly sql: SqlClient.SqlClient; readonly index: ReturnType<typeof makeFullTextIndex> }

describe("a dataset in a full-text table of its own", () => {
  it.scoped(
    "same answers as the shared table, before and after it moves; no trace once forgotten or erased",
    () =>
      Effect.gen(function*() {
        const own: Db = yield* Effect.map(
          open,
          (sql) => ({ sql, index: makeFullTextIndex(sql, { ownTableRows: THRESHOLD }) })
        )
        const shared: Db = yield* Effect.map(open, (sql) => ({ sql, index: makeFullTextIndex(sql) }))
        const both = (f: (db: Db) => Effect.Effect<unknown, unknown>) =>
          Effect.forEach(
            [own, shared],
            (db) => db.sql.withTransaction(Effect.zipRight(f(db), db.index.flush)).pipe(Effect.orDie),
            {
              discard: true
            }
          )
        let nextId = 1
        let stage = 0
        const add = (datasetId: number, count: number, extra = "") => {
          // the same ids in both databases
          const ids = Array.from({ length: count }, () => nextId++)
          return both(({ sql }) =>
            Effect.gen(function*() {
              for (const id of ids) {
                yield* sql`INSERT INTO gb_entities ${
                  sql.insert({
                    id,
                    dataset_id: datasetId,
                    name: WORDS[id % 10]!,
                    name_key: `k${id}`,
                    type: "t",
                    description: textOf(id + 1, extra),
                    created_at: T0,
                    updated_at: T0
                  })
                }`
                yield* sql`INSERT INTO gb_edges ${
                  sql.insert({
                    id,
                    dataset_id: datasetId,
                    source_id: id,
                    target_id: id,
                    relation: "r",
                    description: textOf(id, extra),
                    valid_at: T0,
                    created_at: T0
                  })
                }`
              }
            })
          ).pipe(Effect.as(nextId - 1))
        }
        yield* both(({ sql }) =>
          sql`INSERT INTO gb_datasets (id, user_id, name, created_at) VALUES (1, 'u', 'large', ${T0}), (2, 'u', 'small', ${T0})`
        )

        const answers = (db: Db, datasetId: number) =>
          Effect.forEach(["entities", "edges"] as const, (side: FullTextSide) =>
            Effect.forEach(QUERIES, (terms) =>
              Effect.flatMap(
                db.index.scored(side, datasetId, terms),
                (body) =>
                  db.sql<{ id: number; score: number }>`WITH scored AS (${body})
                SELECT id, score FROM scored ORDER BY score DESC, id`.pipe(Effect.orDie)
              )))
        /** the same ids in the same order, and the same scores (to 9 places: C's log against JavaScript's) */
        const expectSameAnswers = (datasetId: number) =>
          Effect.gen(function*() {
            const mine = (yield* answers(own, datasetId)).flat()
            const reference = (yield* answers(shared, datasetId)).flat()
            // by id: rows of equal scores may differ in the last bit, and so in their order
            const byId = (rows: ReadonlyArray<{ id: number; score: number }>) =>
              [...rows].sort((x, y) =>
                x.id - y.id
              )
            mine.forEach((rows, q) => {
              const expected = byId(reference[q]!)
              expect(byId(rows).map((r) => r.id), `dataset ${datasetId} query ${q} stage ${(stage += 1)}`).toEqual(
                expected.map((r) => r.id)
              )
              byId(rows).forEach((row, i) => expect(row.score).toBeCloseTo(expected[i]!.score, 9))
              // and the order, where scores differ by more than the last bits
              rows.forEach((row, i) => i > 0 && expect(row.score).toBeLessThanOrEqual(rows[i - 1]!.score + 1e-9))
            })
            expect(reference.some((rows) => rows.length > 1)).toBe(true)
            return mine
          })
        const ownTables = own.sql<{ dataset_id: number; side: string }>`SELECT dataset_id, side FROM gb_fts_own
        ORDER BY dataset_id, side`.pipe(Effect.orDie)
        const sharedRows = (datasetId: number) =>
          Effect.forEach(["entities", "edges"], (side) =>
            own.sql.unsafe<{ n: number }>(
              `SELECT COUNT(*) AS n FROM gb_fts_${side} WHERE gb_fts_${side} MATCH 'dataset_id : "${datasetId}"'`
            ).pipe(Effect.map((rows) => Number(rows[0]!.n)), Effect.orDie))

        // below the threshold: both in the shared tables
        const forgotten = newMarker()
        yield* add(1, 40)
        const forgottenUpTo = yield* add(1, 2, forgotten)
        yield* add(2, 10)
        expect(yield* ownTables).toEqual([])
        yield* expectSameAnswers(1)
        const smallBefore = yield* expectSameAnswers(2)

        // past it: the large dataset's sides move, the small one stays
        const erased = newMarker()
        yield* add(1, 20, erased)
        expect(yield* ownTables).toEqual([{ dataset_id: 1, side: "edges" }, { dataset_id: 1, side: "entities" }])
        expect(yield* sharedRows(1)).toEqual([0, 0])
        expect(yield* sharedRows(2)).toEqual([10, 10])
        expect(yield* own.index.rows("edges", 1)).toBe(62)
        expect(yield* own.index.rows("entities", 1)).toBe(62)
        yield* expectSameAnswers(1)
        expect(yield* expectSameAnswers(2)).toEqual(smallBefore)

        // changes after the move reach its table: inserts, updates, deletes
        yield* add(1, 5)
        yield* both(({ sql }) =>
          Effect.zipRight(
            sql`UPDATE gb_edges SET description = 'alice alice paris' WHERE id = 3`,
            sql`UPDATE gb_entities SET description = 'smith works river' WHERE id = 4`
          )
        )
        yield* expectSameAnswers(1)

        // forgotten rows: no trace once compacted, in the own tables' shadow tables as anywhere
        yield* both(({ sql }) =>
          Effect.zipRight(
            sql`DELETE FROM gb_edges WHERE description LIKE ${`%${forgotten}%`}`,
            sql`DELETE FROM gb_entities WHERE description LIKE ${`%${forgotten}%`}`
          )
        )
        expect(forgottenUpTo).toBe(42)
        yield* expectSameAnswers(1)
        expect(yield* own.index.rows("edges", 1)).toBe(65)
        yield* own.index.compact
        expect(yield* markerLocations(own.sql, forgotten)).toEqual([])
        expect(yield* markerLocations(own.sql, erased)).not.toEqual([])

        // erased: the own tables go, the small dataset answers as before
        yield* both(({ index, sql }) =>
          Effect.gen(function*() {
            yield* sql`DELETE FROM gb_edges WHERE dataset_id = 1`
            yield* sql`DELETE FROM gb_entities WHERE dataset_id = 1`
            yield* sql`DELETE FROM gb_datasets WHERE id = 1`
            yield* index.drop(1)
          })
        )
        yield* own.index.compact
        expect(yield* ownTables).toEqual([])
        const left = yield* own.sql<{ name: string }>`SELECT name FROM sqlite_schema WHERE name GLOB 'gb_fts_*_1*'`
        expect(left).toEqual([])
        expect(yield* markerLocations(own.sql, erased)).toEqual([])
        expect(yield* own.index.rows("edges", 1)).toBe(0)
        expect(yield* expectSameAnswers(2)).toEqual(smallBefore)
      }),
    60_000
  )
})
