/**
 * A search result's provenance lists: the MAX_RESULT_LINKS highest artifact ids and session ids
 * of each row, ascending, whatever its number of links; known_at hides links to later
 * artifacts before the cap is taken. On SQLite, each owner's links are one walk of the link
 * table's primary key. The ids-only filter checks, and the rows and links read apart, agree with
 * the full reads.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MAX_RESULT_LINKS, type ReadFilters, SearchRepo } from "../../src/services/SearchRepo.js"
import { forEachDialect } from "../support/databases.js"

const day = (n: number) => new Date(Date.UTC(2025, 0, 1) + n * 86_400_000).toISOString()
const NOW: ReadFilters = { asOf: day(400), knownAt: null, includeExpired: false, sessionId: null, kind: null }
/** artifacts linked to the hub entity and fact: more than the cap */
const LINKED = MAX_RESULT_LINKS + 17

interface Seeded {
  readonly datasetId: number
  readonly hub: number
  readonly quiet: number
  readonly fact: number
  /** the artifact ids, in the order they were stored (ascending) */
  readonly artifacts: ReadonlyArray<number>
}

/** A hub entity and a fact linked to LINKED artifacts (stored a day apart) and sessions; a quiet entity linked to two. */
const seed = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [dataset] = yield* sql<{ id: number }>`INSERT INTO gb_datasets (user_id, name, created_at)
    VALUES ('u', ${name}, ${day(0)}) RETURNING id`
    const datasetId = dataset!.id
    const entity = (name: string) =>
      Effect.map(
        sql<{ id: number }>`INSERT INTO gb_entities ${
          sql.insert({
            dataset_id: datasetId,
            name,
            name_key: name,
            type: "person",
            description: "",
            created_at: day(0),
            updated_at: day(0)
          })
        } RETURNING id`,
        (rows) => rows[0]!.id
      )
    const hub = yield* entity("hub")
    const quiet = yield* entity("quiet")
    const [edge] = yield* sql<{ id: number }>`INSERT INTO gb_edges ${
      sql.insert({
        dataset_id: datasetId,
        source_id: hub,
        target_id: quiet,
        relation: "knows",
        description: "hub knows quiet",
        valid_at: day(0),
        created_at: day(0)
      })
    } RETURNING id`
    const fact = edge!.id
    const artifacts: Array<number> = []
    for (let i = 0; i < LINKED; i++) {
      const [a] = yield* sql<{ id: number }>`INSERT INTO gb_artifacts ${
        sql.insert({ dataset_id: datasetId, kind: "episode", text: `text ${i}`, valid_at: day(i), created_at: day(i) })
      } RETURNING id`
      artifacts.push(a!.id)
      // session ids whose text order is not their number order
      const session = `s${i}`
      yield* sql`INSERT INTO gb_entity_artifacts (entity_id, artifact_id) VALUES (${hub}, ${a!.id})`
      yield* sql`INSERT INTO gb_edge_artifacts (edge_id, artifact_id) VALUES (${fact}, ${a!.id})`
      yield* sql`INSERT INTO gb_entity_sessions (entity_id, session_id) VALUES (${hub}, ${session})`
      yield* sql`INSERT INTO gb_edge_sessions (edge_id, session_id) VALUES (${fact}, ${session})`
      if (i < 2) yield* sql`INSERT INTO gb_entity_artifacts (entity_id, artifact_id) VALUES (${quiet}, ${a!.id})`
    }
    return { datasetId, hub, quiet, fact, artifacts } satisfies Seeded
  }).pipe(Effect.orDie)

/** the cap highest of `ids` by the engines' text order (binary for these ASCII ids), ascending */
const highest = <A extends string | number>(ids: ReadonlyArray<A>) =>
  [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).slice(-MAX_RESULT_LINKS)

/** rows with their result links, as search reads them: the rows and their capped links, joined by id */
const linkedRows = <R extends { readonly id: number }>(
  kind: "fact" | "entity",
  rows: Effect.Effect<ReadonlyArray<R>>,
  ids: ReadonlyArray<number>,
  filters: ReadFilters
) =>
  Effect.flatMap(SearchRepo, (repo) =>
    Effect.map(
      Effect.all([rows, repo.links(kind, ids, filters)]),
      ([found, links]) => found.map((row) => ({ ...row, ...links.get(row.id)! }))
    ))
const linkedEntities = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
  Effect.flatMap(SearchRepo, (repo) => linkedRows("entity", repo.entities(datasetId, ids, filters), ids, filters))
const linkedFacts = (datasetId: number, ids: ReadonlyArray<number>, filters: ReadFilters) =>
  Effect.flatMap(SearchRepo, (repo) => linkedRows("fact", repo.facts(datasetId, ids, filters), ids, filters))

const sessionsUpTo = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`)

forEachDialect((_dialect, makeLayer) => {
  layer(makeLayer())("result links", (it) => {
    it.effect("a hub's lists are its 50 most recent links, ascending; a row with few keeps them all", () =>
      Effect.gen(function*() {
        const s = yield* seed("hub")
        const repo = yield* SearchRepo
        const { hub, quiet } = s
        const entities = yield* linkedEntities(s.datasetId, [quiet, hub], NOW)
        const byId = new Map(entities.map((e) => [e.id, e]))
        expect(byId.get(hub)!.artifact_ids).toEqual(s.artifacts.slice(-MAX_RESULT_LINKS))
        expect(byId.get(hub)!.session_ids).toEqual(highest(sessionsUpTo(LINKED)))
        expect(byId.get(quiet)!.artifact_ids).toEqual(s.artifacts.slice(0, 2))
        expect(byId.get(quiet)!.session_ids).toEqual([])
        const [fact] = yield* linkedFacts(s.datasetId, [s.fact], NOW)
        expect(fact!.artifact_ids).toEqual(s.artifacts.slice(-MAX_RESULT_LINKS))
        expect(fact!.session_ids).toEqual(highest(sessionsUpTo(LINKED)))

        // known_at ten days in: links to artifacts stored later are hidden before the cap
        const early = { ...NOW, knownAt: day(9) }
        const [then] = yield* linkedEntities(s.datasetId, [hub], early)
        expect(then!.artifact_ids).toEqual(s.artifacts.slice(0, 10))
        // the capped lists are the most recent of every link (an export page's), known_at or not
        for (const filters of [NOW, early]) {
          const lastOf = (
            all: { readonly artifact_ids: ReadonlyArray<number>; readonly session_ids: ReadonlyArray<string> }
          ) => ({
            artifact_ids: all.artifact_ids.slice(-MAX_RESULT_LINKS),
            session_ids: all.session_ids.slice(-MAX_RESULT_LINKS)
          })
          const entityLinks = yield* repo.links("entity", [quiet, hub], filters)
          const entityPage = yield* repo.page("entities", s.datasetId, filters, 0, 10)
          for (const id of [quiet, hub]) {
            expect(entityLinks.get(id)).toEqual(lastOf(entityPage.find((e) => e.id === id)!))
          }
          const factLinks = yield* repo.links("fact", [s.fact], filters)
          const factPage = yield* repo.page("facts", s.datasetId, filters, 0, 10)
          expect(factLinks.get(s.fact)).toEqual(lastOf(factPage.find((f) => f.id === s.fact)!))
        }
        // and the export's uncapped page carries every link
        const page = yield* repo.page("entities", s.datasetId, NOW, 0, 10)
        expect(page.find((e) => e.id === hub)!.artifact_ids).toEqual(s.artifacts)
      }))

    it.effect("the ids-only checks pass what the full reads return", () =>
      Effect.gen(function*() {
        const s = yield* seed("checks")
        const repo = yield* SearchRepo
        const asked = [s.hub, s.quiet, 999_999]
        const passing = yield* repo.passing("entity", s.datasetId, asked, NOW)
        const read = yield* repo.entities(s.datasetId, asked, NOW)
        expect([...passing].sort()).toEqual(read.map((e) => e.id).sort())
        expect(passing.size).toBe(2)
        // another dataset's ids never pass; an entity created after known_at does not
        expect((yield* repo.passing("entity", s.datasetId + 1, asked, NOW)).size).toBe(0)
        expect((yield* repo.passing("fact", s.datasetId, [s.fact], NOW)).has(s.fact)).toBe(true)
        const before = { ...NOW, asOf: day(-1) }
        expect((yield* repo.passing("fact", s.datasetId, [s.fact], before)).size).toBe(0)
        expect(yield* repo.facts(s.datasetId, [s.fact], before)).toEqual([])
      }))
  })
})
