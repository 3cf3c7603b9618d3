/**
 * Corrections over MCP (issue 40): the `correct` tool closes a fact, reopens it, deletes a fact
 * and an entity, and merges entities, through the correction programs HTTP uses, scoped to the
 * caller's user. The official SDK client over Streamable HTTP, on both databases.
 */
import { it } from "@effect/vitest"
import { type Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect, Layer, Redacted } from "effect"
import { describe, expect } from "vitest"
import { answer } from "../../layers/testing/FactSentenceModel.js"
import { Authentication } from "../../src/auth/Authentication.js"
import { tokenTable } from "../../src/auth/tokens.js"
import type { LlmRequest } from "../../src/services/Llm.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect, type StorageLayer } from "../support/databases.js"
import { serveTest } from "../support/http.js"
import { mcpClient } from "../support/mcp.js"

const model = (r: LlmRequest) => ({ text: answer(r).text })

const withClients = <A, E>(
  storage: StorageLayer,
  program: (alice: Client, bob: Client) => Effect.Effect<A, E, any>
) => {
  const services = Layer.merge(
    rememberLayer(storage, model),
    Layer.succeed(
      Authentication,
      tokenTable([
        { kind: "plain", secret: Redacted.make("alice-secret-0123456789abcdef"), userId: "alice", admin: false },
        { kind: "plain", secret: Redacted.make("bob-secret-0123456789abcdefgh"), userId: "bob", admin: false }
      ])
    )
  )
  return Effect.gen(function*() {
    return yield* program(
      yield* mcpClient("alice-secret-0123456789abcdef"),
      yield* mcpClient("bob-secret-0123456789abcdefgh")
    )
  }).pipe(Effect.scoped, Effect.provide(serveTest(services) as Layer.Layer<any, any, never>)) as Effect.Effect<
    A,
    E,
    never
  >
}

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args })) as Effect.Effect<any>

const ok = (result: any) => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
  return result.structuredContent
}
const errorOf = (result: any): string => {
  expect(result.isError).toBe(true)
  return JSON.parse(result.content[0].text).error
}

forEachDialect((_dialect, makeLayer) => {
  describe("MCP correct", () => {
    it.live("closes, reopens and deletes a fact, deletes an entity and merges two, for the caller's user only", () =>
      withClients(makeLayer(), (alice, bob) =>
        Effect.gen(function*() {
          const first = ok(yield* call(alice, "remember", { text: "Alice Novak works at Acme in 2020.", wait: true }))
          const fact = first.edges[0]
          const acme = first.entities.find((e: any) => e.name === "Acme")

          // "I never worked at Acme... well, I stopped in 2023"
          const closed = ok(
            yield* call(alice, "correct", { action: "close", id: fact.id, invalid_at: "2023-06-01T00:00:00Z" })
          )
          expect(closed.fact).toMatchObject({ id: fact.id, invalid_at: "2023-06-01T00:00:00.000Z" })
          const context = ok(yield* call(alice, "get_context", {}))
          expect(context.facts.map((f: any) => f.id)).not.toContain(fact.id)
          const reopened = ok(yield* call(alice, "correct", { action: "reopen", id: fact.id }))
          expect(reopened.fact.id).toBe(fact.id)
          expect(reopened.fact.invalid_at ?? null).toBeNull()

          // another user cannot touch it: as absent as a missing one
          expect(errorOf(yield* call(bob, "correct", { action: "delete_fact", id: fact.id }))).toMatch(/not found/)

          // two names of one company, merged
          const second = ok(
            yield* call(alice, "remember", { text: "Alice Novak works at Acme Corp in 2024.", wait: true })
          )
          const acmeCorp = second.entities.find((e: any) => e.name === "Acme Corp")
          const merged = ok(yield* call(alice, "correct", { action: "merge", into: acme.id, from: [acmeCorp.id] }))
          expect(merged).toMatchObject({ into: { id: acme.id }, merged: [acmeCorp.id] })

          // never true at all: gone, with what only it supported
          const deleted = ok(yield* call(alice, "correct", { action: "delete_fact", id: fact.id }))
          expect(deleted.deleted.facts).toBeGreaterThanOrEqual(1)
          const novak = first.entities.find((e: any) => e.name === "Alice Novak")
          const gone = ok(yield* call(alice, "correct", { action: "delete_entity", id: novak.id }))
          expect(gone.deleted.entities).toBeGreaterThanOrEqual(1)
          expect(ok(yield* call(alice, "search", { query: "Alice Novak" })).entities).toEqual([])
        })))

    it.live("a missing or unknown argument is a tool error naming it", () =>
      withClients(makeLayer(), (alice) =>
        Effect.gen(function*() {
          expect(errorOf(yield* call(alice, "correct", { action: "close" }))).toBe("id is required for action close")
          expect(errorOf(yield* call(alice, "correct", { action: "merge", into: 1 }))).toBe(
            "from is required for action merge"
          )
          expect(errorOf(yield* call(alice, "correct", { action: "invalidate", id: 1 }))).toMatch(
            /^action must be one of/
          )
          expect(errorOf(yield* call(alice, "correct", { id: 1 }))).toMatch(/^action/)
        })))
  })
})
