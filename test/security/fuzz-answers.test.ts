/**
 * Model answers are untrusted input (issue 13, item 2): every stage's answer parser is fuzzed
 * with random text, random JSON, JSON in fences and prose, truncated JSON, wrong shapes and
 * huge arrays. A parser returns its typed result or its one-sentence Left naming the stage; it
 * never throws. The adapters' mapping of a provider's HTTP answer and the Jev classifier's
 * answer are fuzzed too, and an extract_graph answer full of hostile strings is driven through
 * the real pipeline: the run succeeds or fails with a 502 that stores nothing, never a 500.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Effect, Either, Exit, type Layer, Option, Redacted } from "effect"
import * as fc from "fast-check"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { JEV_CHOICES, makeJevClassifier } from "../../layers/classifier/JevClassifier.js"
import { mapAnthropicResponse } from "../../layers/llm/AnthropicLlm.js"
import { mapOpenAiResponse } from "../../layers/llm/OpenAiLlm.js"
import { statusOf } from "../../src/domain/Errors.js"
import { IMAGE_THEMES, TEXT_BLOCK_KINDS } from "../../src/domain/Image.js"
import { validateRememberRequest } from "../../src/domain/Remember.js"
import { storableText } from "../../src/kernel/json.js"
import type { ExtractedGraph } from "../../src/kernel/normalize.js"
import { parseTimestamp } from "../../src/kernel/temporal.js"
import { parseDetectGeo } from "../../src/pipeline/enrich/detectGeo.js"
import { readWebSearchAnswer } from "../../src/pipeline/enrich/webSearchAnswer.js"
import { parseImageAnswer } from "../../src/pipeline/image/prompt.js"
import { parseExtractGraph } from "../../src/pipeline/prompts/extractGraph.js"
import { parseResolveEdges } from "../../src/pipeline/prompts/resolveEdges.js"
import { parseSummary } from "../../src/pipeline/prompts/summarizeChunk.js"
import { RememberManager } from "../../src/pipeline/RememberManager.js"
import { MAX_FETCHES, parseResolveSeries } from "../../src/pipeline/series/resolveSeries.js"
import { parseQueryAnswer } from "../../src/query/answer.js"
import { PLACE_KINDS } from "../../src/services/GeoRepo.js"
import { rememberLayer } from "../support/app.js"
import { forEachDialect } from "../support/databases.js"

const RUNS = { numRuns: 200 }

// ---------------------------------------------------------------------------------------------
// Hostile answers

/** Strings a model (or whoever stands in for it) might send: any code unit, lone surrogates included. */
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.constantFrom("", " ", "\u0000", "\ud800", "\udc00x", "\u202e", "null", "NaN", "{", "}", "\"", "\\"),
  fc.constantFrom("constructor", "__proto__", "toString", "stop", "text")
)

/** Any JSON value. */
const anyJson = fc.jsonValue({ maxDepth: 4 })

/** An object with the answer's keys, each holding anything. */
const shaped = (keys: ReadonlyArray<string>, field: fc.Arbitrary<unknown>) =>
  fc.dictionary(fc.constantFrom(...keys), field, { maxKeys: keys.length })

/** A value of roughly the right shape, often wrong in one place. */
const loose = (depth: number): fc.Arbitrary<unknown> =>
  depth <= 0
    ? fc.oneof(anyString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null))
    : fc.oneof(
      { weight: 3, arbitrary: loose(0) },
      { weight: 2, arbitrary: fc.array(loose(depth - 1), { maxLength: 4 }) },
      { weight: 2, arbitrary: fc.dictionary(anyString, loose(depth - 1), { maxKeys: 4 }) }
    )

/** The ways an answer's JSON reaches the parser: bare, fenced, in prose, truncated, doubled, garbled. */
const wrapped = (json: fc.Arbitrary<unknown>) =>
  fc.tuple(json, anyString, anyString, fc.nat(), fc.integer({ min: 0, max: 6 })).map(
    ([value, before, after, cut, how]) => {
      const text = JSON.stringify(value) ?? "undefined"
      switch (how) {
        case 0:
          return text
        case 1:
          return `\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``
        case 2:
          return `${before}\n${text}\n${after}`
        case 3:
          return text.slice(0, cut % (text.length + 1))
        case 4:
          return `${text}${text}`
        case 5:
          return text.replace(/"/g, "'")
        default:
          return `${before}{${after}`
      }
    }
  )

/** An answer: random text, random JSON, or something close to the stage's own form. */
const answerFor = (keys: ReadonlyArray<string>, itemKeys: ReadonlyArray<string>) => {
  const item = itemKeys.length === 0 ? loose(1) : shaped(itemKeys, loose(2))
  const near = shaped(keys, fc.oneof(fc.array(item, { maxLength: 6 }), loose(2)))
  return fc.oneof(anyString, wrapped(anyJson), wrapped(near), wrapped(loose(3)))
}

/** Huge answers: many items, long strings, deep nesting, long runs of braces. */
const hugeAnswers = (key: string, item: unknown): ReadonlyArray<string> => [
  JSON.stringify({ [key]: Array.from({ length: 50_000 }, () => item) }),
  JSON.stringify({ [key]: [], pad: "x".repeat(2_000_000) }),
  `{"${key}": ${"[".repeat(100_000)}${"]".repeat(100_000)}}`,
  "{".repeat(200_000),
  "{a}".repeat(100_000),
  `{"${key}": "${"\\".repeat(100_001)}`,
  `${"```json\n".repeat(10_000)}{"${key}": []}`
]

/** The property every parser must hold: no throw, and a Left is one sentence naming the stage. */
const parses = <A>(stage: string, parse: () => Either.Either<A, string>, check: (a: A) => void): boolean => {
  const result = parse()
  if (Either.isLeft(result)) {
    expect(typeof result.left).toBe("string")
    expect(result.left.startsWith(`${stage} answer`) || stage === "summarize_chunk").toBe(true)
    expect(result.left).not.toContain("\n    at ")
  } else {
    check(result.right)
  }
  return true
}

const isString = (u: unknown): u is string => typeof u === "string"

/** A string both databases store as is: no lone surrogate, no NUL. */
const storable = (s: string) => expect(s, JSON.stringify(s)).toBe(storableText(s))

// ---------------------------------------------------------------------------------------------

describe("extract_graph answer", () => {
  const REFERENCE = "2025-02-01T00:00:00.000Z"
  const check = (graph: ExtractedGraph) => {
    for (const e of graph.entities) {
      expect([e.name, e.type, e.description].every(isString)).toBe(true)
      ;[e.name, e.type, e.description].forEach(storable)
    }
    for (const e of graph.edges) {
      expect([e.source, e.target, e.relation, e.description].every(isString)).toBe(true)
      ;[e.source, e.target, e.relation, e.description].forEach(storable)
      for (const f of [e.source, e.target, e.relation]) expect(f.trim()).not.toBe("")
      // times are canonical, a start is unknown only beside an end, and a fact never ends before it starts
      if (e.valid_at === null) expect(parseTimestamp(e.invalid_at!)).toBeTypeOf("number")
      else {
        expect(parseTimestamp(e.valid_at)).toBeTypeOf("number")
        if (e.invalid_at !== null) expect(parseTimestamp(e.invalid_at)! >= parseTimestamp(e.valid_at)!).toBe(true)
      }
    }
  }
  const answers = answerFor(["entities", "edges"], [
    "name",
    "type",
    "description",
    "source",
    "target",
    "relation",
    "valid_at",
    "invalid_at"
  ])

  it("returns a graph or a Left naming extract_graph, for any answer", () => {
    fc.assert(fc.property(answers, (a) => parses("extract_graph", () => parseExtractGraph(a, REFERENCE), check)), RUNS)
  })

  it("keeps a valid graph whatever its strings hold", () => {
    const entity = fc.record({ name: anyString, type: fc.option(anyString), description: fc.option(anyString) })
    const edge = fc.record({
      source: anyString,
      target: anyString,
      relation: anyString,
      description: fc.option(anyString),
      valid_at: fc.option(fc.oneof(anyString, fc.date({ noInvalidDate: true }).map((d) => d.toISOString()))),
      invalid_at: fc.option(fc.oneof(anyString, fc.date({ noInvalidDate: true }).map((d) => d.toISOString())))
    })
    fc.assert(
      fc.property(fc.array(entity, { maxLength: 5 }), fc.array(edge, { maxLength: 5 }), (entities, edges) => {
        const result = parseExtractGraph(JSON.stringify({ entities, edges }), REFERENCE)
        // NUL is dropped from a model's strings (storableText), so "\u0000" is blank
        const blank = edges.some((e) => [e.source, e.target, e.relation].some((f) => storableText(f).trim() === ""))
        // only an edge with a blank endpoint or relation makes a well-formed graph unusable
        expect(Either.isLeft(result)).toBe(blank)
        if (Either.isRight(result)) {
          check(result.right)
          expect(result.right.entities).toHaveLength(entities.length)
          expect(result.right.edges).toHaveLength(edges.length)
        }
      }),
      RUNS
    )
  })

  it("handles huge answers", () => {
    for (const a of hugeAnswers("entities", { name: "x", type: "person" })) {
      parses("extract_graph", () => parseExtractGraph(a, REFERENCE), check)
    }
    const many = JSON.stringify({
      entities: [],
      edges: Array.from({ length: 50_000 }, (_, i) => ({ source: `a${i}`, target: "b", relation: "r" }))
    })
    expect(Either.getOrThrow(parseExtractGraph(many, REFERENCE)).edges).toHaveLength(50_000)
  })
})

describe("resolve_edges answer", () => {
  const answers = answerFor(["duplicates", "contradictions"], ["new", "existing"])
  const ids = fc.uniqueArray(fc.integer({ min: -5, max: 50 }), { maxLength: 8 })

  it("returns resolutions about given facts only, or a Left naming resolve_edges", () => {
    fc.assert(
      fc.property(answers, ids, ids, (a, news, existing) => {
        const newSet = new Set(news)
        const existingSet = new Set(existing)
        return parses("resolve_edges", () => parseResolveEdges(a, newSet, existingSet), (r) => {
          for (const d of r.duplicates) expect(newSet.has(d.new) && existingSet.has(d.existing)).toBe(true)
          for (const c of r.contradictions) {
            expect(newSet.has(c.new)).toBe(true)
            expect(c.existing.every((id) => existingSet.has(id))).toBe(true)
          }
          // one duplicate per new fact
          expect(new Set(r.duplicates.map((d) => d.new)).size).toBe(r.duplicates.length)
          expect(r.ignored.every(isString)).toBe(true)
        })
      }),
      RUNS
    )
  })

  it("handles huge answers", () => {
    for (const a of hugeAnswers("duplicates", { new: 1, existing: 2 })) {
      parses("resolve_edges", () => parseResolveEdges(a, new Set([1]), new Set([2])), () => {})
    }
  })
})

describe("summarize_chunk answer", () => {
  it("is any non-blank text, trimmed; a blank answer is a Left", () => {
    fc.assert(
      fc.property(fc.oneof(anyString, wrapped(anyJson)), (a) => {
        const result = parseSummary(a)
        if (Either.isRight(result)) {
          expect(result.right).toBe(storableText(result.right).trim())
          expect(result.right).not.toBe("")
        } else {
          expect(storableText(a).trim().replace(/^summary:\s*/i, "")).toBe("")
        }
      }),
      RUNS
    )
  })
})

describe("extract_image answer", () => {
  const answers = answerFor(["theme", "title", "text_blocks"], ["kind", "text"])
  const check = (r: Either.Either.Right<ReturnType<typeof parseImageAnswer>>) => {
    expect((IMAGE_THEMES as ReadonlyArray<string>).includes(r.theme)).toBe(true)
    expect(isString(r.title) && isString(r.text)).toBe(true)
    for (const b of r.text_blocks) {
      expect((TEXT_BLOCK_KINDS as ReadonlyArray<string>).includes(b.kind)).toBe(true)
      expect(b.text.trim()).toBe(b.text)
      expect(b.text).not.toBe("")
      storable(b.text)
    }
  }

  it("returns a normalized reading or a Left naming extract_image", () => {
    fc.assert(fc.property(answers, (a) => parses("extract_image", () => parseImageAnswer(a), check)), RUNS)
  })

  it("handles huge answers", () => {
    for (const a of hugeAnswers("text_blocks", { kind: "label", text: "x" })) {
      parses("extract_image", () => parseImageAnswer(`{"theme": "plot", ${a.slice(1)}`), check)
    }
  })
})

describe("detect_geo answer", () => {
  const answers = answerFor(["places"], ["entity", "kind", "query"])
  const entities = fc.array(fc.record({ name: anyString }), { maxLength: 5 })

  it("returns places of listed entities with a known kind, each once, or a Left naming detect_geo", () => {
    fc.assert(
      fc.property(answers, entities, (a, listed) =>
        parses("detect_geo", () => parseDetectGeo(a, listed), (r) => {
          for (const p of r.places) {
            expect(listed).toContain(p.entity)
            expect((PLACE_KINDS as ReadonlyArray<string>).includes(p.kind)).toBe(true)
            expect(p.query.trim()).not.toBe("")
          }
          expect(new Set(r.places.map((p) => p.entity)).size).toBe(r.places.length)
        })),
      RUNS
    )
  })

  it("handles huge answers", () => {
    for (const a of hugeAnswers("places", { entity: "Berlin", kind: "city" })) {
      parses("detect_geo", () => parseDetectGeo(a, [{ name: "Berlin" }]), () => {})
    }
  })
})

describe("resolve_series answer", () => {
  const answers = answerFor(["fetches"], ["entity", "provider", "query", "reason", "from", "to"])
  const WINDOW = { from: "2025-01-01T00:00:00.000Z", to: "2025-02-01T00:00:00.000Z" }
  const entities = fc.array(fc.record({ id: fc.nat(), name: anyString }), { maxLength: 5 })

  it("returns at most MAX_FETCHES fetches inside the window, or a Left naming resolve_series", () => {
    fc.assert(
      fc.property(
        answers,
        entities,
        (a, listed) =>
          parses("resolve_series", () => parseResolveSeries(a, listed, ["prices"], WINDOW), (r) => {
            expect(r.fetches.length).toBeLessThanOrEqual(MAX_FETCHES)
            for (const f of r.fetches) {
              expect(listed).toContain(f.entity)
              expect(f.provider).toBe("prices")
              expect(f.query.trim()).not.toBe("")
              expect(WINDOW.from <= f.from && f.from <= f.to && f.to <= WINDOW.to).toBe(true)
            }
          })
      ),
      RUNS
    )
  })

  it("handles huge answers", () => {
    const item = { entity: "Apple", provider: "prices", query: "AAPL.US" }
    for (const a of hugeAnswers("fetches", item)) {
      parses("resolve_series", () => parseResolveSeries(a, [{ id: 1, name: "Apple" }], ["prices"], WINDOW), (r) => {
        expect(r.fetches.length).toBeLessThanOrEqual(1)
      })
    }
  })
})

describe("query answer", () => {
  const answers = answerFor(["answer", "citations"], [])
  const facts = fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { maxLength: 8 })

  it("returns the answer and only citations of given facts, or a Left naming query", () => {
    fc.assert(
      fc.property(
        fc.oneof(answers, wrapped(fc.record({ answer: anyString, citations: fc.array(loose(0), { maxLength: 6 }) }))),
        facts,
        (a, given) =>
          parses("query", () => parseQueryAnswer(a, given), (r) => {
            expect(isString(r.answer)).toBe(true)
            expect(r.citations.every((id) => given.includes(id))).toBe(true)
            expect(r.dropped.every((id) => Number.isInteger(id) && !given.includes(id))).toBe(true)
          })
      ),
      RUNS
    )
  })

  it("handles huge answers", () => {
    for (const a of hugeAnswers("citations", 1)) {
      parses("query", () => parseQueryAnswer(`{"answer": "x", ${a.slice(1)}`, [1]), () => {})
    }
  })
})

describe("web_search answer (content blocks)", () => {
  const block = fc.oneof(
    loose(3),
    fc.record({
      type: fc.constantFrom("text", "server_tool_use", "web_search_tool_result", "thinking"),
      text: loose(1)
    }),
    fc.record({ type: fc.constant("server_tool_use"), name: fc.constantFrom("web_search", "x"), input: loose(2) }),
    fc.record({
      type: fc.constant("web_search_tool_result"),
      content: fc.oneof(
        loose(2),
        fc.array(fc.record({ type: fc.constant("web_search_result"), url: loose(0), title: loose(0) }))
      )
    })
  )

  it("reads any list of blocks into strings and lists, skipping what it does not know", () => {
    fc.assert(
      fc.property(fc.array(block, { maxLength: 8 }), (blocks) => {
        const r = readWebSearchAnswer(blocks)
        expect(isString(r.text)).toBe(true)
        ;[r.text, ...r.queries, ...r.sources.map((s) => s.url)].forEach(storable)
        expect(r.queries.every((q) => isString(q) && q.trim() === q && q !== "")).toBe(true)
        expect(r.sources.every((s) => isString(s.url))).toBe(true)
        expect(new Set(r.sources.map((s) => s.url)).size).toBe(r.sources.length)
        expect(r.toolErrors.every(isString)).toBe(true)
      }),
      RUNS
    )
  })
})

// ---------------------------------------------------------------------------------------------
// The adapters' reading of a provider's HTTP answer

describe("the providers' answers", () => {
  /** What the pipeline relies on: the fields are of their declared types (they are stored as such). */
  const wellTyped = (r: NonNullable<ReturnType<typeof mapAnthropicResponse>>) => {
    expect(isString(r.text)).toBe(true)
    expect(isString(r.model)).toBe(true)
    expect(isString(r.stopReason)).toBe(true)
    expect(Array.isArray(r.blocks)).toBe(true)
    for (const n of Object.values(r.usage)) expect(Number.isFinite(n) && n >= 0).toBe(true)
  }
  const anthropicLike = fc.record({
    model: loose(0),
    content: fc.oneof(loose(2), fc.array(fc.oneof(loose(2), fc.record({ type: fc.constant("text"), text: loose(0) })))),
    stop_reason: loose(1),
    usage: fc.oneof(
      loose(1),
      shaped(["input_tokens", "output_tokens", "cache_read_input_tokens", "server_tool_use"], loose(1))
    )
  }, { requiredKeys: [] })
  const openAiLike = fc.record({
    model: loose(0),
    choices: fc.oneof(
      loose(2),
      fc.array(
        fc.record({ message: fc.oneof(loose(1), fc.record({ content: loose(1) })), finish_reason: loose(1) }, {
          requiredKeys: []
        })
      )
    ),
    usage: fc.oneof(loose(1), shaped(["prompt_tokens", "completion_tokens", "prompt_tokens_details"], loose(1)))
  }, { requiredKeys: [] })

  it("Anthropic: a Messages response of the declared types, or none", () => {
    fc.assert(
      fc.property(fc.oneof(anthropicLike, loose(3)), (raw) => {
        const r = mapAnthropicResponse(raw, "none")
        if (r !== undefined) wellTyped(r)
      }),
      RUNS
    )
  })

  it("OpenAI-compatible: a completion of the declared types, or none", () => {
    fc.assert(
      fc.property(fc.oneof(openAiLike, loose(3)), (raw) => {
        const r = mapOpenAiResponse(raw, "none", "openai")
        if (r !== undefined) wellTyped(r)
      }),
      RUNS
    )
  })
})

describe("the Jev classifier's answer", () => {
  // a local server that answers whatever the property hands it
  let server: Server
  let reply = { status: 200, body: "" }
  let url = ""
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume()
      req.on("end", () => res.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const bodies = fc.oneof(
    anyString,
    wrapped(anyJson),
    wrapped(
      shaped(
        ["choice", "confidence", "probabilities"],
        fc.oneof(loose(2), fc.constantFrom(...JEV_CHOICES), fc.double())
      )
    )
  )

  /** A body whose value nests `depth` arrays where the schema wants a string or a number. */
  const deep = (field: string, depth: number) => `{"${field}": ${"[".repeat(depth)}${"]".repeat(depth)}}`

  it("is a ClassifierFailed for deeply nested JSON (the error formatter must not overflow)", async () => {
    const jev = makeJevClassifier({ url, apiKey: Redacted.make("jev-key"), timeoutMs: 5_000 })
    const deepProbability = `{"choice": "simple", "confidence": 0.5, "probabilities": {"a": ${deep("x", 50_000)}}}`
    for (const body of [deep("choice", 100_000), deep("confidence", 10_000), deepProbability]) {
      reply = { status: 200, body }
      const exit = await Effect.runPromiseExit(jev.classify("Alice lives in Berlin."))
      expect(Exit.isFailure(exit) && Option.getOrThrow(Cause.failureOption(exit.cause))._tag).toBe("ClassifierFailed")
    }
  })

  it("is a result of the declared types or a ClassifierFailed, never a defect", async () => {
    const jev = makeJevClassifier({ url, apiKey: Redacted.make("jev-key"), timeoutMs: 5_000 })
    await fc.assert(
      fc.asyncProperty(bodies, fc.constantFrom(200, 200, 200, 400, 401, 500, 503), async (body, status) => {
        reply = { status, body }
        const exit = await Effect.runPromiseExit(jev.classify("Alice lives in Berlin."))
        if (Exit.isFailure(exit)) {
          // a typed failure, not a defect
          const failure = Cause.failureOption(exit.cause)
          expect(Option.isSome(failure), Cause.pretty(exit.cause)).toBe(true)
          expect(Option.getOrThrow(failure)._tag).toBe("ClassifierFailed")
          return
        }
        expect(status).toBe(200)
        const result = Option.getOrThrow(exit.value)
        expect(JEV_CHOICES).toContain(result.complexity)
        expect(result.confidence >= 0 && result.confidence <= 1).toBe(true)
        for (const p of Object.values(result.probabilities)) expect(typeof p).toBe("number")
      }),
      { numRuns: 100 }
    )
  })
})

// ---------------------------------------------------------------------------------------------
// Through the pipeline: whatever the graph's strings hold, the run succeeds or fails cleanly

forEachDialect((_dialect, makeLayer) =>
  describe("a hostile extract_graph answer through the pipeline", () => {
    const name = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("Alice", "Berlin", "Acme") },
      { weight: 2, arbitrary: anyString },
      { weight: 1, arbitrary: fc.constantFrom("x".repeat(100_000), "\u0000", "a\u0000b", "\ud800", " ", "") }
    )
    const graph = fc.record({
      entities: fc.array(fc.record({ name, type: fc.option(name), description: fc.option(name) }), { maxLength: 4 }),
      edges: fc.array(
        fc.record({
          source: name,
          target: name,
          relation: name,
          description: fc.option(name),
          valid_at: fc.option(
            fc.oneof(name, fc.constantFrom("2024-03-01", "0000-01-01", "9999-12-31T23:59:59Z", "-000001-01-01"))
          )
        }),
        { maxLength: 4 }
      )
    })
    const answers = fc.oneof(
      { weight: 3, arbitrary: graph.map((g) => JSON.stringify(g)) },
      { weight: 1, arbitrary: answerFor(["entities", "edges"], ["name"]) }
    )

    const count = (sql: SqlClient.SqlClient, table: string) =>
      sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).pipe(Effect.map((rows) => Number(rows[0]!.n)))

    it("is a success or a 502 that stores nothing; never a defect", async () => {
      let next = ""
      const layer = rememberLayer(makeLayer(), (request) =>
        request.stage === "extract_graph"
          ? { text: next }
          : { text: JSON.stringify({ duplicates: [], contradictions: [] }) })
      const request = Either.getOrThrow(validateRememberRequest({ user_id: "alice", text: "Alice lives in Berlin." }))
      const program = Effect.gen(function*() {
        const manager = yield* RememberManager
        const sql = yield* SqlClient.SqlClient
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(answers, async (answer) => {
              next = answer
              const before = await Effect.runPromise(count(sql, "gb_artifacts"))
              const exit = await Effect.runPromiseExit(manager.submit(request))
              const after = await Effect.runPromise(count(sql, "gb_artifacts"))
              if (Exit.isSuccess(exit)) {
                expect(after).toBe(before + 1)
                return
              }
              const failure = Cause.failureOption(exit.cause)
              expect(Option.isSome(failure), Cause.pretty(exit.cause)).toBe(true)
              expect(statusOf(Option.getOrThrow(failure)), Option.getOrThrow(failure).message).toBe(502)
              expect(after).toBe(before)
            }),
            { numRuns: 100 }
          )
        )
      })
      const provided = program.pipe(Effect.provide(layer as Layer.Layer<any, any, never>)) as Effect.Effect<void>
      await Effect.runPromise(provided)
    })
  })
)
