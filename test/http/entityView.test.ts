/**
 * An entity's story over HTTP (`GET /v1/gb/entities/{id}`, `GET /v1/gb/entities?name=`), on both
 * databases: the entity, every fact touching it by valid_at (a closed one too, unless
 * include_expired=false), each with its endpoints' types and every supporting artifact, and the
 * neighbours once each by name; a name in any case and spacing, the entity with the most facts
 * among those sharing it; 400s naming the field, 404 across users, 403 for another user's token;
 * and the statements served by their indexes (SQLite, without statistics).
 */
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import { Reads } from "../../src/query/Reads.js"
import { EntityStory } from "../../src/query/responses.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { expectError, get, postJson, serveTest, type TestResponse } from "../support/http.js"
import { planOf, sqlCapture } from "../support/sqlCapture.js"
import { getAs, postAs, SECRETS, USER_TOKENS } from "../support/tokens.js"

const withApp = <A, E>(
  storage: StorageLayer,
  program: Effect.Effect<A, E, any>,
  auth?: ReadonlyArray<AuthToken>
) => {
  const services = rememberLayer(storage, (r: LlmRequest) => ({ text: answer(r).text }))
  const layer = auth === undefined ? services : Layer.merge(services, Layer.succeed(Authentication, tokenTable(auth)))
  return program.pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<A, E, never>
}

const remember = (text: string, user = "alice") =>
  Effect.map(postJson("/v1/gb/remember", { user_id: user, text }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

/** A 200's body read with the contract's schema: no field missing, none extra. */
const storyOf = (res: TestResponse): EntityStory => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return Schema.decodeUnknownSync(EntityStory, { onExcessProperty: "error" })(res.json)
}

const entityId = (remembered: any, name: string): number => remembered.entities.find((e: any) => e.name === name).id

/** The facts as `relation target (source)` lines, in story order. */
const lines = (story: EntityStory) => story.facts.map((f) => `${f.source} ${f.relation} ${f.target}`)

const year = (y: number) => `${y}-01-01T00:00:00.000Z`

forEachDialect((_dialect, makeLayer) => {
  describe("an entity's story", () => {
    it.live("facts over time (a closed one too), their artifacts and the neighbours; by id or by name", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const a1 = yield* remember("Alice Novak works at Acme in 2019.")
          const a2 = yield* remember("Alice Novak lives in Berlin in 2020.")
          const a3 = yield* remember("Alice Novak lives in Lisbon in 2021. Alice Novak works at Acme in 2019.")
          const a4 = yield* remember("Bruno Diaz knows Alice Novak in 2015.")
          const alice = entityId(a1, "Alice Novak")

          const res = yield* get(`/v1/gb/entities/${alice}?user_id=alice`)
          const story = storyOf(res)
          expect(story.entity).toMatchObject({
            id: alice,
            name: "Alice Novak",
            type: "person",
            description: expect.any(String),
            created_at: expect.any(String),
            artifact_ids: [a1.artifact_id, a2.artifact_id, a3.artifact_id, a4.artifact_id]
          })
          // by valid_at: the story in the order it happened
          expect(lines(story)).toEqual([
            "Bruno Diaz knows Alice Novak",
            "Alice Novak works_at Acme",
            "Alice Novak lives_in Berlin",
            "Alice Novak lives_in Lisbon"
          ])
          // the JSON keys in the schema's order: each endpoint's type next to its name and id
          expect(Object.keys(res.json.facts[0]).slice(0, 7)).toEqual([
            "id",
            "source",
            "source_id",
            "source_type",
            "target",
            "target_id",
            "target_type"
          ])
          const [knows, acme, berlin, lisbon] = story.facts
          expect(knows).toMatchObject({
            source_id: entityId(a4, "Bruno Diaz"),
            source_type: "person",
            target_id: alice,
            target_type: "person",
            valid_at: year(2015),
            artifact_ids: [a4.artifact_id]
          })
          // restated by the third text: both artifacts support it
          expect(acme).toMatchObject({
            target_type: "organization",
            valid_at: year(2019),
            artifact_ids: [a1.artifact_id, a3.artifact_id]
          })
          expect(acme!.invalid_at).toBeUndefined()
          // closed by Lisbon: ended in 2021, superseded when the third text was stored
          expect(berlin).toMatchObject({
            target_type: "place",
            valid_at: year(2020),
            invalid_at: year(2021),
            expired_at: expect.any(String),
            artifact_ids: [a2.artifact_id]
          })
          expect(lisbon).toMatchObject({ valid_at: year(2021), artifact_ids: [a3.artifact_id] })
          expect(lisbon!.invalid_at).toBeUndefined()
          expect(lisbon!.expired_at).toBeUndefined()
          expect(story.neighbours).toEqual([
            { id: entityId(a1, "Acme"), name: "Acme", type: "organization" },
            { id: entityId(a2, "Berlin"), name: "Berlin", type: "place" },
            { id: entityId(a4, "Bruno Diaz"), name: "Bruno Diaz", type: "person" },
            { id: entityId(a3, "Lisbon"), name: "Lisbon", type: "place" }
          ])

          // the name in another case and spacing; or the id as a parameter
          const byName = storyOf(
            yield* get(`/v1/gb/entities?user_id=alice&dataset=main&name=${encodeURIComponent(" alice   NOVAK ")}`)
          )
          expect(byName).toEqual(story)
          expect(storyOf(yield* get(`/v1/gb/entities?user_id=alice&id=${alice}`))).toEqual(story)
          expect(storyOf(yield* get(`/v1/gb/entities/${alice}?user_id=alice&include_expired=true`))).toEqual(story)

          // only what holds now: Berlin has ended, and is no longer a neighbour
          const now = storyOf(yield* get(`/v1/gb/entities/${alice}?user_id=alice&include_expired=false`))
          expect(lines(now)).toEqual([
            "Bruno Diaz knows Alice Novak",
            "Alice Novak works_at Acme",
            "Alice Novak lives_in Lisbon"
          ])
          expect(now.neighbours.map((n) => n.name)).toEqual(["Acme", "Bruno Diaz", "Lisbon"])
          expect(storyOf(yield* get(`/v1/gb/entities?user_id=alice&name=Alice%20Novak&include_expired=false`))).toEqual(
            now
          )

          // a neighbour's story, from the other side
          const berlinStory = storyOf(yield* get(`/v1/gb/entities/${berlin!.target_id}?user_id=alice`))
          expect(berlinStory.facts.map((f) => f.id)).toEqual([berlin!.id])
          expect(berlinStory.neighbours).toEqual([{ id: alice, name: "Alice Novak", type: "person" }])
          const gone = storyOf(yield* get(`/v1/gb/entities/${berlin!.target_id}?user_id=alice&include_expired=false`))
          expect(gone).toMatchObject({ facts: [], neighbours: [] })
        })
      ))

    it.live("a name that several entities share: the one with the most facts, ties by lowest id", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const person = entityId(yield* remember("Paris knows Bruno Diaz in 2015."), "Paris")
          const place = entityId(
            yield* remember("Alice Novak visited Paris in 2016. Bruno Diaz visited Paris in 2017."),
            "Paris"
          )
          expect(person).toBeLessThan(place)
          const paris = storyOf(yield* get("/v1/gb/entities?user_id=alice&name=paris"))
          expect(paris.entity).toMatchObject({ id: place, type: "place" })
          expect(paris.neighbours.map((n) => n.name)).toEqual(["Alice Novak", "Bruno Diaz"])

          const rome = entityId(yield* remember("Rome knows Bruno Diaz in 2015."), "Rome")
          const romePlace = entityId(yield* remember("Alice Novak visited Rome in 2016."), "Rome")
          expect(rome).toBeLessThan(romePlace)
          expect(storyOf(yield* get("/v1/gb/entities?user_id=alice&name=ROME")).entity).toMatchObject({
            id: rome,
            type: "person"
          })
        })
      ))

    it.live("bad input is a 400 naming the field; another user's entity or dataset a 404", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const alice = entityId(yield* remember("Alice Novak works at Acme in 2019."), "Alice Novak")
          yield* remember("Bruno Diaz works at Initech in 2018.", "bob")
          const cases: ReadonlyArray<readonly [string, RegExp]> = [
            ["/v1/gb/entities/0?user_id=alice", /^id must be a positive integer/],
            ["/v1/gb/entities/abc?user_id=alice", /^id must be a positive integer/],
            ["/v1/gb/entities/-1?user_id=alice", /^id must be a positive integer/],
            [`/v1/gb/entities/${alice}`, /^user_id is required/],
            [`/v1/gb/entities/${alice}?user_id=%20`, /^user_id must not be empty/],
            [`/v1/gb/entities/${alice}?user_id=alice&include_expired=maybe`, /^include_expired must be a boolean/],
            [`/v1/gb/entities/${alice}?user_id=alice&dataset=${"d".repeat(129)}`, /^dataset must be at most 128/],
            ["/v1/gb/entities?user_id=alice", /id or name is required/],
            [`/v1/gb/entities?user_id=alice&id=${alice}&name=Alice`, /id and name cannot both be given/],
            ["/v1/gb/entities?user_id=alice&id=0", /^id must be a positive integer/],
            ["/v1/gb/entities?user_id=alice&id=1.5", /^id must be a positive integer/],
            ["/v1/gb/entities?user_id=alice&name=%20%20", /^name must not be empty/],
            ["/v1/gb/entities?name=Alice", /^user_id is required/]
          ]
          for (const [path, message] of cases) expectError(yield* get(path), 400, message)

          // bob has a dataset "main", but not this entity; eve has no dataset at all
          expectError(yield* get(`/v1/gb/entities/${alice}?user_id=bob`), 404, new RegExp(`entity ${alice} not found`))
          expectError(
            yield* get("/v1/gb/entities?user_id=bob&name=Alice%20Novak"),
            404,
            /no entity named "Alice Novak"/
          )
          expectError(yield* get(`/v1/gb/entities/${alice}?user_id=eve`), 404, /no dataset "main"/)
          expectError(yield* get(`/v1/gb/entities/${alice}?user_id=alice&dataset=work`), 404, /no dataset "work"/)
          expectError(yield* get("/v1/gb/entities/999999?user_id=alice"), 404, /entity 999999 not found/)
          expectError(yield* get("/v1/gb/entities?user_id=alice&name=Nobody"), 404, /no entity named "Nobody"/)

          // the program itself refuses a request built without its schema
          const unchecked = yield* Effect.either(
            (yield* Reads).entityStory({ user_id: "alice", dataset: "main", include_expired: true })
          )
          expect(Either.isLeft(unchecked) && unchecked.left).toMatchObject({
            _tag: "InvalidRequest",
            message: expect.stringMatching(/id or name is required/)
          })
        })
      ))
  })
})

describe("an entity's story: tokens", () => {
  it.live("a user's token reads that user's entities only", () =>
    withApp(
      sqliteLayer(),
      Effect.gen(function*() {
        const res = yield* postAs(
          "/v1/gb/remember",
          { user_id: "alice", text: "Alice Novak works at Acme in 2019." },
          SECRETS.alice
        )
        expect(res.status, res.text).toBe(200)
        const alice = entityId(res.json, "Alice Novak")
        for (
          const path of [`/v1/gb/entities/${alice}?user_id=alice`, "/v1/gb/entities?user_id=alice&name=alice novak"]
        ) {
          expectError(yield* getAs(path), 401)
          expectError(yield* getAs(path, SECRETS.bob), 403, /may not act for/)
          expect(storyOf(yield* getAs(path, SECRETS.alice)).entity.id).toBe(alice)
        }
      }),
      USER_TOKENS
    ))
})

describe("an entity's story: query plans", () => {
  const trace = sqlCapture()

  it.effect("the entity by id or by the words of a name, its facts and statements read through indexes, never a scan", () =>
    Effect.gen(function*() {
      const dataset = yield* (yield* DatasetsRepo).getOrCreate("u", "main", "2026-01-01T00:00:00.000Z")
      const search = yield* SearchRepo
      const sql = yield* SqlClient.SqlClient
      // one entity, so that the aliases' statement runs too
      yield* sql`INSERT INTO gb_entities (id, dataset_id, name, name_key, type, created_at, updated_at)
        VALUES (1, ${dataset.id}, 'Alice Novak', 'alice novak', 'person', '2026-01-01', '2026-01-01')`
      yield* sql`INSERT INTO gb_entity_words (dataset_id, word, entity_id) VALUES (${dataset.id}, 'alice', 1),
        (${dataset.id}, 'novak', 1)`
      trace.start()
      expect((yield* search.entitiesNamed(dataset.id, ["alice", "novak"], 10)).map((e) => e.name)).toEqual([
        "Alice Novak"
      ])
      const byWords = [...trace.captured]
      trace.start()
      yield* search.entity(dataset.id, { id: 1 })
      const byId = [...trace.captured]
      trace.start()
      yield* search.entityFacts(dataset.id, 1, "2026-01-01T00:00:00.000Z")
      const facts = trace.captured.filter((q) => q.includes("UNION ALL"))
      trace.start()
      yield* search.entityStatements([1, 2], { asOf: "2026-01-01T00:00:00.000Z", knownAt: "2026-01-01" }, 12)
      const statements = [...trace.captured]
      trace.stop()
      expect(byWords).toHaveLength(2)
      expect(facts).toHaveLength(1)
      expect(statements).toHaveLength(1)
      const wordsPlan = yield* planOf(byWords[0]!)
      expect(wordsPlan).toMatch(
        /SEARCH w USING (COVERING )?INDEX sqlite_autoindex_gb_entity_words_1 \(dataset_id=\? AND word=\?\)/
      )
      expect(wordsPlan).toMatch(
        /SEARCH n USING (INTEGER PRIMARY KEY \(rowid=\?\)|INDEX gb_entities_dataset_id \(dataset_id=\? AND id=\?\))/
      )
      expect(wordsPlan).toMatch(/USING (COVERING )?INDEX gb_edges_source_created \(source_id=\?\)/)
      expect(wordsPlan).toMatch(/USING (COVERING )?INDEX gb_edges_target_created \(target_id=\?\)/)
      const aliasPlan = yield* planOf(byWords[1]!)
      expect(aliasPlan).toMatch(/SEARCH ea USING INDEX sqlite_autoindex_gb_entity_artifacts_1 \(entity_id=\?\)/)
      expect(yield* planOf(byId.find((q) => q.includes("gb_entities n"))!)).toMatch(
        /SEARCH n USING INTEGER PRIMARY KEY \(rowid=\?\)/
      )
      const factPlan = yield* planOf(facts[0]!)
      expect(factPlan).toMatch(/SEARCH e USING INDEX gb_edges_source_created \(source_id=\?\)/)
      expect(factPlan).toMatch(/SEARCH e USING INDEX gb_edges_target_created \(target_id=\?\)/)
      const statementPlan = yield* planOf(statements[0]!)
      expect(statementPlan).toMatch(/SEARCH ea USING INDEX sqlite_autoindex_gb_entity_artifacts_1 \(entity_id=\?\)/)
      expect(statementPlan).toMatch(/SEARCH a USING INTEGER PRIMARY KEY \(rowid=\?\)/)
      for (const plan of [wordsPlan, aliasPlan, factPlan, statementPlan]) {
        expect(plan).not.toMatch(/\bSCAN (e|n|s|t|w|ea|a)\b/)
      }
    }).pipe(Effect.provide(SqliteLive(":memory:"))))
})
