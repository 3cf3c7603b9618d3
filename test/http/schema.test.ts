/**
 * A dataset's schema over HTTP (docs/SCHEMA.md), on both databases, with a scripted model that
 * follows the prompt (test/support/schemaModel.ts): an exclusive `lives_in` closes the earlier
 * home in code with no resolve_edges call while a non-exclusive relation still goes to the model;
 * the extract_graph request carries the types in its answer schema and the instructions (the
 * dataset's and the request's) in its prompt; attributes round-trip through remember, search, a
 * story and the export, and a forget takes away what only the forgotten text stated; a schema
 * change applies to later remembers only; validation names the field.
 */
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { describe, expect } from "vitest"
import { ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { EXTRACT_GRAPH_ANSWER } from "../../src/pipeline/prompts/extractGraph.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { expectError, get, postJson, send, serveTest } from "../support/http.js"
import { schemaModel, type ScriptGraph, userText } from "../support/schemaModel.js"

const alice = (attributes?: Record<string, unknown>) => ({
  name: "Alice Novak",
  types: ["person"],
  description: "an engineer",
  ...(attributes === undefined ? {} : { attributes })
})
const place = (name: string) => ({ name, types: ["place"] })
const home = (target: string, valid_at?: string, invalid_at?: string) => ({
  source: "Alice Novak",
  target,
  relations: ["lives_in", "lives in"],
  ...(valid_at === undefined ? {} : { valid_at }),
  ...(invalid_at === undefined ? {} : { invalid_at })
})
const job = (target: string, valid_at: string) => ({
  source: "Alice Novak",
  target,
  relations: ["works_at", "works at"],
  valid_at
})

const TEXTS: Record<string, ScriptGraph> = {
  "Alice Novak lives in Berlin since 2020.": { entities: [alice(), place("Berlin")], edges: [home("Berlin", "2020")] },
  "Alice Novak lives in Lisbon since 2023.": { entities: [alice(), place("Lisbon")], edges: [home("Lisbon", "2023")] },
  "Alice Novak lived in Madrid from 2018.": { entities: [alice(), place("Madrid")], edges: [home("Madrid", "2018")] },
  "Alice Novak works at Acme since 2021.": {
    entities: [alice(), { name: "Acme", types: ["organization"] }],
    edges: [job("Acme", "2021")]
  },
  "Alice Novak works at Globex since 2024.": {
    entities: [alice(), { name: "Globex", types: ["organization"] }],
    edges: [job("Globex", "2024")]
  },
  "Alice Novak works at Initech and lives in Rome since 2025.": {
    entities: [alice(), { name: "Initech", types: ["organization"] }, place("Rome")],
    edges: [job("Initech", "2025"), home("Rome", "2025")]
  },
  "Dana Reed is CEO of Acme since 2019.": {
    entities: [{ name: "Dana Reed", types: ["person"] }, { name: "Acme", types: ["organization"] }],
    edges: [{ source: "Dana Reed", target: "Acme", relations: ["ceo_of", "is CEO of"], valid_at: "2019" }]
  },
  "Evan Park is CEO of Acme since 2024.": {
    entities: [{ name: "Evan Park", types: ["person"] }, { name: "Acme", types: ["organization"] }],
    edges: [{ source: "Evan Park", target: "Acme", relations: ["ceo_of", "is CEO of"], valid_at: "2024" }]
  },
  "Alice Novak is an engineer, born in 1990.": {
    entities: [alice({ role: "engineer", born: 1990, shoe_size: 38 })],
    edges: []
  },
  "Alice Novak is a manager now; she lives in Porto.": {
    entities: [alice({ role: "manager" }), place("Porto")],
    edges: [home("Porto")]
  },
  "Acme files ticket T-1. -- Dana Lee, Helpdesk Inc": {
    entities: [
      { name: "Acme", types: ["customer", "organization"], attributes: { tier: "pro" } },
      { name: "T-1", types: ["ticket", "product"] },
      { name: "Dana Lee", types: ["person"] },
      { name: "Helpdesk Inc", types: ["organization"] }
    ],
    edges: [
      { source: "Acme", target: "T-1", relations: ["files", "filed"] },
      { source: "Dana Lee", target: "Helpdesk Inc", relations: ["works_at", "works at"], excludedBy: "signatures" }
    ]
  }
}

const withApp = <A, E>(storage: StorageLayer, program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(serveTest(rememberLayer(storage, schemaModel(TEXTS))) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<A, E, never>

const SCHEMA = {
  entity_types: [
    {
      name: "Person",
      description: "a human being",
      attributes: [
        { name: "role", type: "string", description: "their job title" },
        { name: "born", type: "integer", description: "the year they were born" }
      ]
    },
    { name: "place", description: "a city or country" }
  ],
  edge_types: [
    {
      name: "lives in",
      description: "where a person lives",
      source_types: ["person"],
      target_types: ["place"],
      exclusive: "per_source"
    },
    { name: "works_at", description: "a person's employer", source_types: ["person"], target_types: ["organization"] }
  ],
  instructions: "Only facts about people."
}

const putSchema = (body: unknown, query = "user_id=alice", dataset = "main") =>
  send(
    HttpClientRequest.put(`/v1/gb/datasets/${dataset}/schema?${query}`).pipe(HttpClientRequest.bodyUnsafeJson(body))
  )

const remember = (text: string, extra: Record<string, unknown> = {}) =>
  Effect.map(
    postJson("/v1/gb/remember", { user_id: "alice", text, reference_time: "2025-01-01T00:00:00Z", ...extra }),
    (res) => {
      expect(res.status, res.text).toBe(200)
      return res.json
    }
  )

const rows = <A extends object>(query: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(query)).pipe(Effect.orDie)

const homes = rows<{ id: number; target: string; valid_at: string | null; invalid_at: string | null; live: unknown }>(
  `SELECT e.id, t.name AS target, e.valid_at, e.invalid_at, e.expired_at IS NULL AS live
    FROM gb_edges e JOIN gb_entities t ON t.id = e.target_id WHERE e.relation = 'lives_in' ORDER BY e.id`
)

const calls = (stage: string) => Effect.map(ScriptedLlm, (s) => s.callsFor(stage))

forEachDialect((_dialect, makeLayer) => {
  describe("dataset schema", () => {
    it.live("an exclusive per_source relation closes the earlier fact in code; others still go to the model", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const put = yield* putSchema(SCHEMA)
          expect(put.status, put.text).toBe(200)
          const berlin = (yield* remember("Alice Novak lives in Berlin since 2020.")).edges[0].id
          const lisbon = yield* remember("Alice Novak lives in Lisbon since 2023.")
          // the bar: the earlier home is closed at the new one's start, and no resolve_edges call was made
          expect(lisbon.invalidated_edges).toEqual([berlin])
          expect((yield* calls("resolve_edges")).length).toBe(0)
          expect((yield* homes).map((h) => [h.target, h.invalid_at, Boolean(h.live)])).toEqual([
            ["Berlin", "2023-01-01T00:00:00.000Z", false],
            ["Lisbon", null, true]
          ])
          // recorded as a closing decision, like the model's (a forget can undo it)
          expect(
            yield* rows<any>(`SELECT kind, edge_id, by_edge_id, invalid_at FROM gb_edge_closures ORDER BY id`)
          ).toEqual([{
            kind: "close",
            edge_id: berlin,
            by_edge_id: lisbon.edges[0].id,
            invalid_at: "2023-01-01T00:00:00.000Z"
          }])

          // an older home told late is stored closed at the first stored one's start (rule 3), still in code
          const madrid = (yield* remember("Alice Novak lived in Madrid from 2018.")).edges[0]
          expect(madrid).toMatchObject({ invalid_at: "2020-01-01T00:00:00.000Z", expired_at: expect.any(String) })
          expect((yield* calls("resolve_edges")).length).toBe(0)

          // a relation that is not exclusive still goes to the model, and only it is asked about
          yield* remember("Alice Novak works at Acme since 2021.")
          const asked = yield* calls("resolve_edges")
          expect(asked.length).toBe(1)
          const prompt = readResolveEdgesPrompt(userText(asked[0]!))
          expect(prompt.new_facts.map((f: any) => f.relation)).toEqual(["works_at"])
          const globex = yield* remember("Alice Novak works at Globex since 2024.")
          expect((yield* calls("resolve_edges")).length).toBe(2)
          expect(globex.invalidated_edges).toHaveLength(1)

          // deleting the fact that closed Berlin reopens it (the decision is undone as the model's would be)
          const del = yield* send(HttpClientRequest.del(`/v1/gb/facts/${lisbon.edges[0].id}?user_id=alice`))
          expect(del.status, del.text).toBe(200)
          expect(del.json.reopened_facts).toEqual([berlin])

          // in one text, the exclusive fact is decided in code and only the other is shown to the model
          const rome = yield* remember("Alice Novak works at Initech and lives in Rome since 2025.")
          const last = yield* calls("resolve_edges")
          expect(last.length).toBe(3)
          expect(readResolveEdgesPrompt(userText(last[2]!)).new_facts.map((f: any) => f.relation)).toEqual(["works_at"])
          expect(rome.invalidated_edges).toContain(berlin)
          expect((yield* homes).filter((h) => Boolean(h.live)).map((h) => h.target)).toEqual(["Rome"])
        })
      ))

    it.live("per_target: a company's new CEO closes the earlier one, in code", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          const put = yield* putSchema({
            edge_types: [{
              name: "CEO of",
              description: "the person who runs a company",
              source_types: ["person"],
              target_types: ["organization"],
              exclusive: "per_target"
            }]
          })
          expect(put.json.edge_types[0]).toMatchObject({ name: "ceo_of", exclusive: "per_target" })
          const dana = (yield* remember("Dana Reed is CEO of Acme since 2019.")).edges[0].id
          const evan = yield* remember("Evan Park is CEO of Acme since 2024.")
          expect(evan.invalidated_edges).toEqual([dana])
          expect((yield* calls("resolve_edges")).length).toBe(0)
          const story = yield* get(`/v1/gb/facts/${dana}?user_id=alice`)
          expect(story.json.fact).toMatchObject({ invalid_at: "2024-01-01T00:00:00.000Z" })
        })
      ))

    it.live("the extract_graph request carries the types as enums in its answer schema, and the instructions", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          expect((yield* putSchema(SCHEMA)).status).toBe(200)
          yield* remember("Alice Novak lives in Berlin since 2020.", { instructions: "Ignore signatures." })
          const call = (yield* calls("extract_graph"))[0]!
          const root = call.answerSchema!.schema as any
          expect(root.properties.entities.items.properties.type.anyOf).toEqual(expect.arrayContaining([
            { type: "string", enum: ["person"], description: "a human being" },
            { type: "string", enum: ["place"], description: "a city or country" }
          ]))
          expect(root.properties.edges.items.properties.relation.anyOf).toEqual(expect.arrayContaining([
            { type: "string", enum: ["lives_in"], description: "where a person lives" },
            { type: "string", enum: ["works_at"], description: "a person's employer" }
          ]))
          expect(Object.keys(root.properties.entities.items.properties.attributes.anyOf[0].properties)).toEqual([
            "role",
            "born"
          ])
          expect(call.system).toContain(
            "- lives_in (person -> place): where a person lives (a source has one at a time"
          )
          expect(call.system).toMatch(
            /<instructions>\nFor this memory:\nOnly facts about people\.\nFor this text:\nIgnore signatures\.\n<\/instructions>/
          )
          // the request's instructions are for that call only
          yield* remember("Alice Novak lives in Lisbon since 2023.")
          const next = (yield* calls("extract_graph"))[1]!
          expect(next.system).toContain("Only facts about people.")
          expect(next.system).not.toContain("Ignore signatures.")
          expectError(
            yield* postJson("/v1/gb/remember", { user_id: "alice", text: "x", instructions: "" }),
            400,
            /^instructions must not be empty/
          )
          expectError(
            yield* postJson("/v1/gb/remember", {
              user_id: "alice",
              image: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
              instructions: "x"
            }),
            400,
            /^instructions must not be given together with image/
          )
        })
      ))

    it.live("attributes round-trip, take the latest value, and a forget takes away what only it stated", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          expect((yield* putSchema(SCHEMA)).status).toBe(200)
          const first = yield* remember("Alice Novak is an engineer, born in 1990.")
          // the undeclared attribute the model offered is not stored
          expect(first.entities[0].attributes).toEqual({ born: 1990, role: "engineer" })
          const second = yield* remember("Alice Novak is a manager now; she lives in Porto.")
          const id = second.entities.find((e: any) => e.name === "Alice Novak").id
          expect(second.entities.find((e: any) => e.name === "Alice Novak").attributes).toEqual({
            born: 1990,
            role: "manager"
          })
          const expected = { born: 1990, role: "manager" }
          const search = yield* postJson("/v1/gb/search", { user_id: "alice", query: "Alice Novak" })
          expect(search.json.entities.find((e: any) => e.id === id).attributes).toEqual(expected)
          const story = yield* get(`/v1/gb/entities/${id}?user_id=alice`)
          expect(story.json.entity.attributes).toEqual(expected)
          const exported = yield* get("/v1/gb/graph?user_id=alice")
          expect(exported.json.entities.find((e: any) => e.id === id).attributes).toEqual(expected)
          // Porto has none: the field is absent
          expect(exported.json.entities.find((e: any) => e.name === "Porto").attributes).toBeUndefined()

          // forgetting the first text takes its birth year away: no remaining text states it
          const gone = yield* send(HttpClientRequest.del(`/v1/gb/artifacts/${first.artifact_id}?user_id=alice`))
          expect(gone.status, gone.text).toBe(200)
          expect((yield* get(`/v1/gb/entities/${id}?user_id=alice`)).json.entity.attributes).toEqual({
            role: "manager"
          })
        })
      ))

    it.live("a schema change applies to later remembers only; without one nothing changes", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          // no schema: the base answer schema and prompt
          const before = yield* remember("Alice Novak lives in Berlin since 2020.")
          const plain = (yield* calls("extract_graph"))[0]!
          expect(plain.answerSchema).toEqual(EXTRACT_GRAPH_ANSWER)
          expect(plain.system).not.toContain("<instructions>")
          expect(before.entities.map((e: any) => e.type)).toEqual(["person", "place"])

          // only customers and tickets from now on; the stored graph stays as it is
          const put = yield* putSchema({
            entity_types: [
              {
                name: "Customer",
                description: "a company that buys from us",
                attributes: [{ name: "tier", type: "string" }]
              },
              { name: "ticket", description: "a support request" }
            ],
            allow_other_entity_types: false,
            edge_types: [{ name: "files", description: "a customer files a ticket", exclusive: null }],
            instructions: "Ignore email signatures."
          })
          expect(put.status, put.text).toBe(200)
          expect(put.json.entity_types.map((t: any) => t.name)).toEqual(["customer", "ticket"])
          expect((yield* get("/v1/gb/datasets/main/schema?user_id=alice")).json).toEqual(put.json)
          const graph = (yield* get("/v1/gb/graph?user_id=alice")).json
          expect(graph.entities.map((e: any) => [e.name, e.type])).toEqual([["Alice Novak", "person"], [
            "Berlin",
            "place"
          ]])
          expect(graph.edges).toHaveLength(1)

          const after = yield* remember("Acme files ticket T-1. -- Dana Lee, Helpdesk Inc")
          expect(after.entities.map((e: any) => [e.name, e.type, e.attributes])).toEqual([
            ["Acme", "customer", { tier: "pro" }],
            ["T-1", "ticket", undefined]
          ])
          // the signature's fact was left out as the instructions say
          expect(after.edges.map((e: any) => [e.source, e.relation, e.target])).toEqual([["Acme", "files", "T-1"]])

          // an empty schema removes it: the next extraction is as without one
          expect((yield* putSchema({})).json).toEqual({
            entity_types: [],
            allow_other_entity_types: true,
            edge_types: [],
            allow_other_edge_types: true,
            instructions: null
          })
          yield* remember("Alice Novak lives in Lisbon since 2023.")
          expect((yield* calls("extract_graph")).at(-1)!.answerSchema).toEqual(EXTRACT_GRAPH_ANSWER)
        })
      ))

    it.live("validation names the field; a GET of a dataset without one answers the empty schema; a PUT creates it", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          expect((yield* get("/v1/gb/datasets/fresh/schema?user_id=alice")).json).toEqual({
            entity_types: [],
            allow_other_entity_types: true,
            edge_types: [],
            allow_other_edge_types: true,
            instructions: null
          })
          expectError(
            yield* putSchema({ entity_types: [{ name: "ticket", description: "x", atributes: [] }] }),
            400,
            /^unknown field "entity_types\[0\]\.atributes" \(did you mean "entity_types\[0\]\.attributes"\?\)$/
          )
          expectError(
            yield* putSchema({ edge_types: [{ name: "files", description: "x", source_types: ["customer"] }] }),
            400,
            /^edge_types\[0\]\.source_types\[0\] is not an entity type of this schema/
          )
          expectError(
            yield* putSchema({ edge_types: [{ name: "x", description: "y", exclusive: "always" }] }),
            400,
            /^edge_types\[0\]\.exclusive must be one of per_source, per_target/
          )
          expectError(
            yield* putSchema({
              entity_types: Array.from({ length: 51 }, (_, i) => ({ name: `t${i}`, description: "d" }))
            }),
            400,
            /^entity_types must have at most 50 items/
          )
          expectError(yield* putSchema({}, ""), 400, /user_id/)
          expect((yield* get("/v1/gb/datasets?user_id=alice")).json.datasets).toEqual([])
          const put = yield* putSchema({ instructions: "Only customers." }, "user_id=alice", "fresh")
          expect(put.status, put.text).toBe(200)
          expect((yield* get("/v1/gb/datasets?user_id=alice")).json.datasets.map((d: any) => d.name)).toEqual(["fresh"])
        })
      ))
  })
})
