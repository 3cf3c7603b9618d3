/**
 * The admin API of the Memory view (`/v1/gb/admin/api/memory/{search,entity,fact}`): the same
 * programs as the user endpoints, so the same answers, in the database `db` names; 400s naming
 * the parameter, 404 for an unknown database or another user's data; an admin token only.
 */
import { HttpClientRequest } from "@effect/platform"
import { it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { describe, expect } from "vitest"
import { SqliteLive } from "../../layers/sql/index.js"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { type AdminDatabase, AdminDatabases, repositoriesReadDeps } from "../../src/admin/AdminDatabases.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { AuthToken } from "../../src/config/tables.js"
import { readDeps } from "../../src/query/deps.js"
import { makeReads } from "../../src/query/Reads.js"
import { EntityStory, FactView, SearchResponse } from "../../src/query/responses.js"
import { AdminRepo } from "../../src/services/AdminRepo.js"
import { DatasetsRepo } from "../../src/services/DatasetsRepo.js"
import { InferencesRepo } from "../../src/services/InferencesRepo.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { RunLogRepo } from "../../src/services/RunLogRepo.js"
import { SearchRepo } from "../../src/services/SearchRepo.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, sqliteLayer, type StorageLayer } from "../support/databases.js"
import { expectError, get, postJson, send, serveTest, type TestResponse } from "../support/http.js"

const API = "/v1/gb/admin/api/memory"

const services = (storage: StorageLayer) => rememberLayer(storage, (r: LlmRequest) => ({ text: answer(r).text }))

const withApp = <A, E>(layer: Layer.Layer<any, any, never>, program: Effect.Effect<A, E, any>) =>
  program.pipe(Effect.provide(serveTest(layer) as Layer.Layer<any, any, never>)) as Effect.Effect<A, E, never>

const remember = (text: string, user = "alice") =>
  Effect.map(postJson("/v1/gb/remember", { user_id: user, text }), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.json
  })

const ok = <A, I>(res: TestResponse, schema: Schema.Schema<A, I>): A => {
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(res.json)
}

const AS_OF = "2030-01-01T00:00:00.000Z"

forEachDialect((_dialect, makeLayer) => {
  describe("the Memory view's admin API", () => {
    it.live("answers what the user endpoints answer; 400s name the parameter; 404 across users", () =>
      withApp(
        services(makeLayer()),
        Effect.gen(function*() {
          const a1 = yield* remember("Alice Novak lives in Berlin in 2020.")
          yield* remember("Alice Novak lives in Lisbon in 2021.")
          yield* remember("Bruno Diaz works at Initech in 2018.", "bob")
          const alice = a1.entities.find((e: any) => e.name === "Alice Novak").id

          const searched = ok(
            yield* get(
              `${API}/search?db=default&user_id=alice&query=Alice%20Novak&as_of=${AS_OF}&include_expired=true`
            ),
            SearchResponse
          )
          const direct = yield* postJson("/v1/gb/search", {
            user_id: "alice",
            query: "Alice Novak",
            as_of: AS_OF,
            include_expired: true
          })
          expect(searched).toEqual(ok(direct, SearchResponse))
          expect(searched.facts.map((f) => f.target).sort()).toEqual(["Berlin", "Lisbon"])

          const story = ok(yield* get(`${API}/entity?db=default&user_id=alice&dataset=main&id=${alice}`), EntityStory)
          expect(story).toEqual(ok(yield* get(`/v1/gb/entities/${alice}?user_id=alice`), EntityStory))
          expect(ok(yield* get(`${API}/entity?db=default&user_id=alice&name=alice%20novak`), EntityStory)).toEqual(
            story
          )

          const berlin = story.facts.find((f) => f.target === "Berlin")!
          const view = ok(yield* get(`${API}/fact?db=default&user_id=alice&id=${berlin.id}`), FactView)
          expect(view).toEqual(ok(yield* get(`/v1/gb/facts/${berlin.id}?user_id=alice`), FactView))
          expect(view.closed_by.map((c) => c.kind)).toEqual(["close"])

          const cases: ReadonlyArray<readonly [string, RegExp]> = [
            [`${API}/search?db=default&query=x`, /^user_id is required/],
            [`${API}/search?db=default&user_id=alice`, /^query is required/],
            [`${API}/search?db=default&user_id=alice&query=x&as_of=soon`, /^as_of /],
            [`${API}/entity?db=default&user_id=alice`, /id or name is required/],
            [`${API}/entity?db=default&user_id=alice&id=0`, /^id must be a positive integer/],
            [`${API}/fact?db=default&user_id=alice`, /^id is required/],
            [`${API}/fact?db=default&user_id=alice&id=abc`, /^id must be a positive integer/]
          ]
          for (const [path, message] of cases) expectError(yield* get(path), 400, message)
          expectError(yield* get(`${API}/search?db=nope&user_id=alice&query=x`), 404, /no database named "nope"/)
          expectError(yield* get(`${API}/entity?db=default&user_id=bob&id=${alice}`), 404, /entity \d+ not found/)
          expectError(yield* get(`${API}/fact?db=default&user_id=bob&id=${berlin.id}`), 404, /fact \d+ not found/)
          expectError(yield* get(`${API}/fact?db=default&user_id=eve&id=${berlin.id}`), 404, /no dataset "main"/)
        })
      ))
  })
})

// two databases, as `serve --db a --db b`: `db=` picks whose memory is read
const twoDatabases = Layer.scoped(
  AdminDatabases,
  Effect.gen(function*() {
    const alpha: AdminDatabase = {
      name: "alpha",
      dialect: "sqlite",
      primary: true,
      runLog: yield* RunLogRepo,
      inferences: yield* InferencesRepo,
      admin: yield* AdminRepo,
      reads: makeReads(yield* readDeps)
    }
    const extra = yield* Layer.build(SqliteLive(":memory:"))
    // beta: a dataset of alice's with no facts
    yield* Context.get(extra, DatasetsRepo).getOrCreate("alice", "main", "2026-01-01T00:00:00.000Z")
    const beta: AdminDatabase = {
      name: "beta",
      dialect: "sqlite",
      primary: false,
      runLog: Context.get(extra, RunLogRepo),
      inferences: Context.get(extra, InferencesRepo),
      admin: Context.get(extra, AdminRepo),
      reads: makeReads(repositoriesReadDeps({
        datasets: Context.get(extra, DatasetsRepo),
        search: Context.get(extra, SearchRepo),
        inferences: Context.get(extra, InferencesRepo)
      }))
    }
    return [alpha, beta]
  }).pipe(Effect.orDie)
)

describe("the Memory view's admin API over two databases", () => {
  it.live("db= picks the database", () =>
    withApp(
      twoDatabases.pipe(Layer.provideMerge(services(sqliteLayer()))),
      Effect.gen(function*() {
        yield* remember("Alice Novak lives in Berlin in 2020.")
        const query = "user_id=alice&query=Alice%20Novak"
        expect(ok(yield* get(`${API}/search?db=alpha&${query}`), SearchResponse).facts).toHaveLength(1)
        expect(ok(yield* get(`${API}/search?db=beta&${query}`), SearchResponse)).toMatchObject({
          facts: [],
          entities: []
        })
        expectError(yield* get(`${API}/fact?db=beta&user_id=alice&id=1`), 404, /fact 1 not found/)
        expectError(yield* get(`${API}/search?db=default&${query}`), 404, /no database named "default"/)
        // no db: the first, the server's own
        expect(ok(yield* get(`${API}/search?${query}`), SearchResponse).facts).toHaveLength(1)
      })
    ))
})

const SECRETS = { admin: "admin-token-M3k9", alice: "alice-token-Q8r2p" }
const TOKENS: ReadonlyArray<AuthToken> = [
  { kind: "plain", secret: Redacted.make(SECRETS.admin), admin: true },
  { kind: "plain", secret: Redacted.make(SECRETS.alice), admin: false, userId: "alice" }
]

describe("the Memory view's admin API: tokens", () => {
  it.live("an admin token only: a user's token is refused, even for the user's own memory", () =>
    withApp(
      Layer.merge(services(sqliteLayer()), Layer.succeed(Authentication, tokenTable(TOKENS))),
      Effect.gen(function*() {
        const stored = yield* send(
          HttpClientRequest.post("/v1/gb/remember").pipe(
            HttpClientRequest.bearerToken(SECRETS.alice),
            HttpClientRequest.bodyUnsafeJson({ user_id: "alice", text: "Alice Novak lives in Berlin in 2020." })
          )
        )
        expect(stored.status, stored.text).toBe(200)
        const as = (path: string, secret?: string) =>
          send(
            secret === undefined
              ? HttpClientRequest.get(path)
              : HttpClientRequest.get(path).pipe(HttpClientRequest.bearerToken(secret))
          )
        for (
          const path of [
            `${API}/search?db=default&user_id=alice&query=Berlin`,
            `${API}/fact?db=default&user_id=alice&id=${stored.json.edges[0].id}`
          ]
        ) {
          expectError(yield* as(path), 401)
          expectError(yield* as(path, SECRETS.alice), 403)
          expect((yield* as(path, SECRETS.admin)).status).toBe(200)
        }
      })
    ))
})
