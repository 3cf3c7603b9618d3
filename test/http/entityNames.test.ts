/**
 * Finding an entity by part of its name (`GET /v1/gb/entities?name=`), and an entity described
 * by all its texts, on both databases (issue 40, items 5 and 6). The model answers as one that
 * follows the extraction prompt would: prose around a fenced JSON, a description per text in its
 * own words, `valid_at` null when the text gives no start, fields the parser does not ask for.
 */
import { HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { it } from "@effect/vitest"
import { Effect, type Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { answer, stageOf } from "../../layers/testing/FactSentenceModel.js"
import { EntityCandidates, EntityStory } from "../../src/query/responses.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { expectError, get, postJson, send, serveTest, type TestResponse } from "../support/http.js"
import { extractionScript, NAMES_TEXTS } from "./entityNamesScript.js"

const model = (r: LlmRequest) => {
  const system = typeof r.system === "string" ? r.system : ""
  if (stageOf(system) !== "extract_graph") return { text: answer(r).text }
  return { text: extractionScript(r) }
}

const withApp = <A, E>(storage: StorageLayer, program: Effect.Effect<A, E, any>) =>
  program.pipe(
    Effect.provide(serveTest(rememberLayer(storage, model)) as Layer.Layer<any, any, never>)
  ) as Effect.Effect<A, E, never>

const remember = (text: string) =>
  Effect.map(postJson("/v1/gb/remember", { user_id: "alice", text }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

const byName = (name: string) => get(`/v1/gb/entities?user_id=alice&name=${encodeURIComponent(name)}`)

const storyOf = (res: TestResponse): EntityStory => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return Schema.decodeUnknownSync(EntityStory, { onExcessProperty: "error" })(res.json)
}

const candidatesOf = (res: TestResponse): EntityCandidates => {
  expect(res.status, res.text.slice(0, 300)).toBe(300)
  return Schema.decodeUnknownSync(EntityCandidates, { onExcessProperty: "error" })(res.json)
}

const words = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ name: string; word: string }>`SELECT n.name, w.word FROM gb_entity_words w
      JOIN gb_entities n ON n.id = w.entity_id ORDER BY n.name, w.word`
).pipe(Effect.orDie)

forEachDialect((_dialect, makeLayer) => {
  describe("an entity by part of its name", () => {
    it.live("whole words, any case, no accents needed; the name spelled whole first; ambiguity answers 300", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          yield* remember(NAMES_TEXTS.engineer)
          yield* remember(NAMES_TEXTS.zoe)
          // the bar: `name=Alice` finds "Alice Smith"
          expect(storyOf(yield* byName("Alice")).entity.name).toBe("Alice Smith")
          expect(storyOf(yield* byName("smith")).entity.name).toBe("Alice Smith")
          expect(storyOf(yield* byName("zoe")).entity.name).toBe("Zoë Martin")
          expect(storyOf(yield* byName("ZOË  martin")).entity.name).toBe("Zoë Martin")
          // whole words only: a prefix is not a word
          expectError(yield* byName("Ali"), 404, /no entity named "Ali"/)
          expectError(yield* byName("Alice Martin"), 404, /no entity named/)

          yield* remember(NAMES_TEXTS.jones)
          const both = candidatesOf(yield* byName("alice"))
          expect(both.name).toBe("alice")
          expect(both.matches).toBe(2)
          // the most facts first, then the lowest id: a fact each, Alice Smith was stored first
          expect(both.candidates.map((c) => [c.name, c.type, c.facts, c.match])).toEqual([
            ["Alice Smith", "person", 1, "words of the name"],
            ["Alice Jones", "person", 1, "words of the name"]
          ])
          // spelled whole, the name wins over the words of the other
          expect(storyOf(yield* byName("alice JONES")).entity.name).toBe("Alice Jones")
          expect(yield* words).toContainEqual({ name: "Zoë Martin", word: "zoe" })
        })
      ))

    it.live("a merge makes the merged name an alias; forgetting the text that gave it removes it", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          yield* remember(NAMES_TEXTS.engineer)
          const bobJ = yield* remember(NAMES_TEXTS.bobJ)
          const bobJones = yield* remember(NAMES_TEXTS.bobJones)
          const idOf = (r: any, name: string) => r.entities.find((e: any) => e.name === name).id
          // two entities hold the word "bob": ambiguous
          expect(candidatesOf(yield* byName("bob")).candidates.map((c) => c.name).sort()).toEqual([
            "Bob J.",
            "Bob Jones"
          ])
          const merged = yield* postJson("/v1/gb/entities/merge", {
            user_id: "alice",
            into: idOf(bobJones, "Bob Jones"),
            from: [idOf(bobJ, "Bob J.")]
          })
          expect(merged.status, merged.text).toBe(200)
          // the alias spelled whole finds the entity it was merged into, which shows it
          const story = storyOf(yield* byName("bob j"))
          expect(story.entity.name).toBe("Bob Jones")
          expect(story.entity.aliases).toEqual(["Bob J."])
          expect(storyOf(yield* byName("Bob")).entity.name).toBe("Bob Jones")
          // by id too
          expect(storyOf(yield* get(`/v1/gb/entities/${story.entity.id}?user_id=alice`)).entity.aliases).toEqual([
            "Bob J."
          ])
          // a spelling of the same name in other case is no alias
          expect(storyOf(yield* byName("Alice Smith")).entity.aliases).toBeUndefined()

          const forgot = yield* send(HttpClientRequest.del(`/v1/gb/artifacts/${bobJ.artifact_id}?user_id=alice`))
          expect(forgot.status, forgot.text).toBe(200)
          const after = storyOf(yield* byName("bob"))
          expect(after.entity.name).toBe("Bob Jones")
          expect(after.entity.aliases).toBeUndefined()
          // no word of the forgotten spelling is left to find it by
          expectError(yield* byName("bob j"), 404, /no entity named "bob j"/)
          expect((yield* words).filter((w) => w.word === "j")).toEqual([])
        })
      ))
  })

  describe("an entity described by all its texts", () => {
    it.live("the story and the context block show every text's words, newest first, each once", () =>
      withApp(
        makeLayer(),
        Effect.gen(function*() {
          yield* remember(NAMES_TEXTS.engineer)
          yield* remember(NAMES_TEXTS.payments)
          const tea = yield* remember(NAMES_TEXTS.tea)
          // the same words in another case, with a full stop, are one statement
          yield* remember(NAMES_TEXTS.engineerAgain)
          const story = storyOf(yield* byName("Alice Smith"))
          // the entity's own description is the last text's; the summary has them all
          expect(story.entity.description).toBe("Engineer at Acme.")
          expect(story.entity.summary).toBe(
            "Engineer at Acme; a person who likes green tea; leads the payments team"
          )
          const context = yield* postJson("/v1/gb/context", { user_id: "alice" })
          expect(context.status, context.text).toBe(200)
          expect(context.json.context).toContain(
            "- Alice Smith (person): Engineer at Acme; a person who likes green tea; leads the payments team"
          )
          expect(context.json.entities.find((e: any) => e.name === "Alice Smith").summary).toBe(story.entity.summary)

          // forgetting a text takes its words out of the summary
          const forgot = yield* send(HttpClientRequest.del(`/v1/gb/artifacts/${tea.artifact_id}?user_id=alice`))
          expect(forgot.status, forgot.text).toBe(200)
          expect(storyOf(yield* byName("Alice Smith")).entity.summary).toBe(
            "Engineer at Acme; leads the payments team"
          )
        })
      ))
  })
})
