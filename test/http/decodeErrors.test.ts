/**
 * The `jsonErrors` middleware of src/http/Http.ts on a tiny HttpApi of its own: HttpApi's own
 * decoding of a path, URL parameters and a payload answers 400 `{"error": "..."}` worded by
 * Wire.ts's formatter (not HttpApi's `{_tag, issues}`), a domain error failing a handler answers
 * its own status with `{"error": message}`, a body that is not JSON is a 400, a defect a 500 and
 * an unknown route a 404, all in the one wire shape.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { layer } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, Schema } from "effect"
import { expect } from "vitest"
import { LlmUnavailable, NotFound } from "../../src/domain/Errors.js"
import { IntegerIn, required, Str, UserId } from "../../src/domain/Wire.js"
import { jsonErrors } from "../../src/http/Http.js"
import { get, postJson, postRaw, send, type TestResponse } from "../support/http.js"

/** A path parameter must be encodeable to a string: IntegerIn's own encoded side is unknown. */
const ItemId = Schema.compose(
  // a path is text: its digits are read as the number IntegerIn takes (as UrlParams reads a URL's)
  Schema.transform(Schema.String, Schema.Unknown, {
    strict: true,
    decode: (s) => (/^\d+$/.test(s) ? Number(s) : s),
    encode: (u) => String(u)
  }),
  IntegerIn(1, 1000),
  { strict: false }
)

const Item = Schema.Struct({ id: Schema.Number, user_id: Schema.String })

class ItemsGroup extends HttpApiGroup.make("items")
  .add(
    HttpApiEndpoint.get("getItem", "/items/:id")
      .setPath(Schema.Struct({ id: ItemId }))
      .setUrlParams(Schema.Struct({ user_id: required(UserId) }))
      .addSuccess(Item)
      .addError(NotFound)
  )
  .add(
    HttpApiEndpoint.post("makeItem", "/items")
      .setPayload(Schema.Struct({ user_id: required(UserId), text: required(Str) }))
      .addSuccess(Item, { status: 201 })
      .addError(LlmUnavailable)
  )
  .add(HttpApiEndpoint.get("broken", "/broken").addSuccess(Item))
{}

class TinyApi extends HttpApi.make("tiny").add(ItemsGroup) {}

const ItemsLive = HttpApiBuilder.group(TinyApi, "items", (handlers) =>
  handlers
    .handle("getItem", ({ path, urlParams }) =>
      path.id === 404
        ? Effect.fail(new NotFound({ message: `no item 404 for ${urlParams.user_id}` }))
        : Effect.succeed({ id: path.id, user_id: urlParams.user_id }))
    .handle("makeItem", ({ payload }) =>
      payload.text === "model please"
        ? Effect.fail(new LlmUnavailable({ message: "no LLM is configured" }))
        : Effect.succeed({ id: 1, user_id: payload.user_id }))
    .handle("broken", () => Effect.dieMessage("a bug")))

const TinyServer = HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.middleware(jsonErrors)),
  Layer.provide(HttpApiBuilder.api(TinyApi).pipe(Layer.provide(ItemsLive))),
  Layer.provideMerge(NodeHttpServer.layerTest),
  // the 500's error log is expected noise
  Layer.provide(Logger.minimumLogLevel(LogLevel.None))
)

const expectError = (res: TestResponse, status: number, message: string) => {
  expect({ status: res.status, body: res.json }, res.text).toEqual({ status, body: { error: message } })
  expect(res.headers["content-type"]).toContain("application/json")
}

layer(TinyServer, { excludeTestServices: true })("HttpApi's decode errors in the wire shape", (it) => {
  it.effect("a decoded request reaches its handler", () =>
    Effect.gen(function*() {
      const res = yield* get("/items/7?user_id=alice")
      expect({ status: res.status, body: res.json }).toEqual({ status: 200, body: { id: 7, user_id: "alice" } })
      const made = yield* postJson("/items", { user_id: "alice", text: "hello", extra: "ignored" })
      expect({ status: made.status, body: made.json }).toEqual({ status: 201, body: { id: 1, user_id: "alice" } })
    }))

  it.effect("a path parameter that does not decode is a 400 naming it", () =>
    Effect.gen(function*() {
      expectError(yield* get("/items/abc?user_id=alice"), 400, "id must be an integer from 1 to 1000")
      expectError(yield* get("/items/5000?user_id=alice"), 400, "id must be an integer from 1 to 1000")
    }))

  it.effect("URL parameters that do not decode are a 400 naming the first problem", () =>
    Effect.gen(function*() {
      expectError(yield* get("/items/7"), 400, "user_id is required")
      expectError(yield* get("/items/7?user_id="), 400, "user_id must not be empty")
    }))

  it.effect("a payload that does not decode is a 400 naming the field", () =>
    Effect.gen(function*() {
      expectError(yield* postJson("/items", { text: "hello" }), 400, "user_id is required")
      expectError(yield* postJson("/items", { user_id: "alice", text: 5 }), 400, "text must be a string")
      expectError(yield* postJson("/items", { user_id: "alice", text: null }), 400, "text is required")
    }))

  it.effect("a body that is not JSON is a 400", () =>
    Effect.gen(function*() {
      const res = yield* postRaw("/items", "{not json")
      expect(res.status, res.text).toBe(400)
      expect(Object.keys(res.json)).toEqual(["error"])
      expect(res.json.error).toMatch(/^malformed JSON body/)
    }))

  it.effect("a domain error failing a handler answers its own status and message", () =>
    Effect.gen(function*() {
      expectError(yield* get("/items/404?user_id=alice"), 404, "no item 404 for alice")
      expectError(yield* postJson("/items", { user_id: "alice", text: "model please" }), 503, "no LLM is configured")
    }))

  it.effect("a defect is a 500 and an unknown route a 404, in the same shape", () =>
    Effect.gen(function*() {
      expectError(yield* get("/broken"), 500, "internal error while handling GET /broken")
      expectError(yield* send(HttpClientRequest.del("/nowhere")), 404, "no route for DELETE /nowhere")
    }))
})
