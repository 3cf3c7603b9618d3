/**
 * The seeded world of the read-side tests: Alice's dataset (moves, work, a friend, a chunked
 * report, sessions s1-s3, an episode) and Mallory's dataset of the same name with a
 * look-alike Alice, so that every test can also check that one user never sees the other's.
 *
 * "Today" is 2025-06-01. Alice lived in Berlin until last month (F1: closed on 2025-05-01
 * when the move to Paris, F2, was learned).
 */
import { Context, Effect, Layer } from "effect"
import { HashEmbeddings } from "../../layers/testing/HashEmbeddings.js"
import { type LlmScript, ScriptedLlm } from "../../layers/testing/ScriptedLlm.js"
import { MemoryVectorStoreLive } from "../../layers/vectors/MemoryVectorStore.js"
import { RememberSettings } from "../../src/pipeline/Settings.js"
import { rememberLayer } from "../support/app.js"
import type { StorageLayer } from "../support/databases.js"
import { type SeededGraph, seedGraph } from "../support/readSeed.js"

export const TODAY = "2025-06-01T00:00:00.000Z"
export const DIMENSIONS = 64

export class World extends Context.Tag("test/World")<World, {
  readonly alice: SeededGraph
  readonly mallory: SeededGraph
}>() {}

const seedWorld = Effect.gen(function*() {
  const alice = yield* seedGraph({
    user: "alice",
    model: "extractor-1",
    vectorDimensions: DIMENSIONS,
    artifacts: [
      {
        key: "A1",
        text: "Alice Smith lives in Berlin and works at Acme.",
        session: "s1",
        at: "2024-01-01T00:00:00.000Z"
      },
      { key: "A5", text: "Carol lives in Rome.", session: "s1", at: "2024-01-10T00:00:00.000Z" },
      {
        key: "A2",
        kind: "episode",
        text: "Bob knows Alice. Bob likes chess.",
        session: "s2",
        at: "2024-02-01T00:00:00.000Z"
      },
      { key: "A4", text: "The long quarterly report.", at: "2024-03-01T00:00:00.000Z" },
      {
        key: "C1",
        kind: "chunk",
        parent: "A4",
        text: "The quarterly report says Acme builds reusable rockets in Bremen.",
        at: "2024-03-01T00:00:00.000Z"
      },
      { key: "S1", kind: "chunk_summary", parent: "C1", text: "Acme builds rockets.", at: "2024-03-01T00:00:00.000Z" },
      { key: "A3", text: "Alice moved to Paris.", session: "s3", at: "2025-05-01T00:00:00.000Z" }
    ],
    entities: [
      {
        name: "Alice Smith",
        type: "person",
        description: "an engineer who writes software",
        at: "2024-01-01T00:00:00.000Z",
        artifacts: ["A1", "A2", "A3"],
        sessions: ["s1", "s2", "s3"]
      },
      {
        name: "Berlin",
        type: "place",
        description: "capital of Germany",
        at: "2024-01-01T00:00:00.000Z",
        artifacts: ["A1"],
        sessions: ["s1"]
      },
      {
        name: "Acme",
        type: "organization",
        description: "a rocket company",
        at: "2024-01-01T00:00:00.000Z",
        artifacts: ["A1", "C1"],
        sessions: ["s1"]
      },
      { name: "Carol", type: "person", at: "2024-01-10T00:00:00.000Z", artifacts: ["A5"], sessions: ["s1"] },
      { name: "Rome", type: "place", at: "2024-01-10T00:00:00.000Z", artifacts: ["A5"], sessions: ["s1"] },
      {
        name: "Bob",
        type: "person",
        description: "a chess player",
        at: "2024-02-01T00:00:00.000Z",
        artifacts: ["A2"],
        sessions: ["s2"]
      },
      { name: "Chess", type: "concept", at: "2024-02-01T00:00:00.000Z", artifacts: ["A2"], sessions: ["s2"] },
      { name: "Bremen", type: "place", description: "a port city", at: "2024-03-01T00:00:00.000Z", artifacts: ["C1"] },
      { name: "Paris", type: "place", at: "2025-05-01T00:00:00.000Z", artifacts: ["A3"], sessions: ["s3"] }
    ],
    facts: [
      {
        key: "F1",
        source: "Alice Smith",
        target: "Berlin",
        relation: "lives in",
        description: "Alice Smith lives in Berlin",
        valid_at: "2024-01-01T00:00:00.000Z",
        invalid_at: "2025-05-01T00:00:00.000Z",
        at: "2024-01-01T00:00:00.000Z",
        expired_at: "2025-05-01T00:00:00.000Z",
        artifacts: ["A1"],
        sessions: ["s1"]
      },
      {
        key: "F3",
        source: "Alice Smith",
        target: "Acme",
        relation: "works at",
        description: "Alice Smith works at Acme",
        valid_at: "2023-06-01T00:00:00.000Z",
        at: "2024-01-01T00:00:00.000Z",
        artifacts: ["A1"],
        sessions: ["s1"]
      },
      {
        key: "F7",
        source: "Carol",
        target: "Rome",
        relation: "lives in",
        description: "Carol lives in Rome",
        valid_at: "2024-01-10T00:00:00.000Z",
        at: "2024-01-10T00:00:00.000Z",
        artifacts: ["A5"],
        sessions: ["s1"]
      },
      {
        key: "F4",
        source: "Bob",
        target: "Alice Smith",
        relation: "knows",
        description: "Bob knows Alice Smith",
        valid_at: "2024-02-01T00:00:00.000Z",
        at: "2024-02-01T00:00:00.000Z",
        artifacts: ["A2"],
        sessions: ["s2"]
      },
      {
        key: "F5",
        source: "Bob",
        target: "Chess",
        relation: "likes",
        description: "Bob likes chess",
        valid_at: "2024-02-01T00:00:00.000Z",
        at: "2024-02-01T00:00:00.000Z",
        artifacts: ["A2"],
        sessions: ["s2"]
      },
      {
        key: "F6",
        source: "Acme",
        target: "Bremen",
        relation: "located in",
        description: "Acme is located in Bremen",
        valid_at: "2024-03-01T00:00:00.000Z",
        at: "2024-03-01T00:00:00.000Z",
        artifacts: ["C1"],
        // a session that restated the fact alone: its endpoints are not linked to s4
        sessions: ["s4"]
      },
      {
        key: "F2",
        source: "Alice Smith",
        target: "Paris",
        relation: "lives in",
        description: "Alice Smith lives in Paris",
        valid_at: "2025-05-01T00:00:00.000Z",
        at: "2025-05-01T00:00:00.000Z",
        artifacts: ["A3"],
        sessions: ["s3"]
      }
    ]
  })
  const mallory = yield* seedGraph({
    user: "mallory",
    vectorDimensions: DIMENSIONS,
    artifacts: [{ key: "M", text: "Alice Smith lives in London.", session: "s1", at: "2024-01-01T00:00:00.000Z" }],
    entities: [
      {
        name: "Alice Smith",
        type: "person",
        description: "a spy",
        at: "2024-01-01T00:00:00.000Z",
        artifacts: ["M"],
        sessions: ["s1"]
      },
      { name: "London", type: "place", at: "2024-01-01T00:00:00.000Z", artifacts: ["M"], sessions: ["s1"] }
    ],
    facts: [{
      key: "M1",
      source: "Alice Smith",
      target: "London",
      relation: "lives in",
      description: "Alice Smith lives in London",
      valid_at: "2024-01-01T00:00:00.000Z",
      at: "2024-01-01T00:00:00.000Z",
      artifacts: ["M"],
      sessions: ["s1"]
    }]
  })
  return { alice, mallory }
})

/** The world on a fresh database, with hash embeddings, an in-memory vector store and a scripted LLM. */
export const worldLayer = (storage: StorageLayer, script: LlmScript = {}) =>
  Layer.effect(World, seedWorld).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        HashEmbeddings.layer({ dimensions: DIMENSIONS }),
        MemoryVectorStoreLive(),
        ScriptedLlm.layer(script),
        RememberSettings.layer()
      )
    ),
    Layer.provideMerge(storage)
  )

/** The world under the whole remember machinery (for the HTTP app, which serves remember too). */
export const worldAppLayer = (storage: StorageLayer, script: LlmScript = {}) =>
  Layer.effect(World, seedWorld).pipe(
    Layer.provideMerge(
      rememberLayer(storage, script, {
        embeddings: HashEmbeddings.layer({ dimensions: DIMENSIONS }),
        vectors: MemoryVectorStoreLive()
      })
    )
  )
