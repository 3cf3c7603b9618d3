/**
 * The pure parts of the enrichments: key-entity selection (section 13), the detect_geo
 * answer (section 12), the web search answer's blocks, and Nominatim's jsonv2 answer.
 */
import { Effect, Either, Option, Redacted } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { classifierFor, geoFor, webSearchAvailable } from "../layers/App.js"
import { parseNominatim } from "../layers/geo/NominatimResolver.js"
import { type AppConfig, defaultConfig } from "../src/Config.js"
import type { EntityRow } from "../src/domain/Rows.js"
import { buildDetectGeoPrompt, parseDetectGeo } from "../src/pipeline/enrich/detectGeo.js"
import { keyEntities, type TextPart } from "../src/pipeline/enrich/keyEntities.js"
import { buildWebSearchPrompt, readWebSearchAnswer, WEB_SEARCH_TOOL } from "../src/pipeline/enrich/webSearchAnswer.js"
import { ComplexityClassifier } from "../src/services/ComplexityClassifier.js"
import { GeoResolver } from "../src/services/GeoResolver.js"
import { webSearchBlocks } from "./support/fakeAnthropic.js"
import { BERLIN, nominatimResult } from "./support/fakeNominatim.js"

const entity = (id: number, name: string, type = "other", description = ""): EntityRow => ({
  id,
  dataset_id: 1,
  name,
  name_key: name.toLowerCase(),
  type,
  description,
  model_id: null,
  created_at: "2025-01-01T00:00:00.000Z"
})

let edgeIds = 0
const edge = (source: number, target: number) => ({ id: ++edgeIds, source_id: source, target_id: target })

describe("keyEntities", () => {
  const [a, b, c, d] = [entity(1, "A"), entity(2, "B"), entity(3, "C"), entity(4, "D")]

  it("takes the 3 entities with the most facts, ties by order of appearance", () => {
    const part: TextPart = {
      artifactId: 10,
      entities: [a!, b!, c!, d!],
      edges: [edge(4, 3), edge(4, 2), edge(3, 1), edge(2, 4)]
    }
    // D: 3 facts; B: 2, C: 2 (B appears first); A: 1
    expect(keyEntities([part]).map((k) => [k.entity.name, k.facts])).toEqual([["D", 3], ["B", 2], ["C", 2]])
  })

  it("counts an entity without facts last, a self-loop once, and a fact repeated across chunks once", () => {
    const shared = edge(1, 1)
    const parts: ReadonlyArray<TextPart> = [
      { artifactId: 10, entities: [b!, a!], edges: [shared] },
      { artifactId: 11, entities: [a!, c!], edges: [shared, edge(3, 99)] }
    ]
    expect(keyEntities(parts).map((k) => [k.entity.name, k.facts, k.parentArtifactId])).toEqual([
      ["A", 1, 10],
      ["C", 1, 11],
      ["B", 0, 10]
    ])
  })

  it("gives the chunk an entity first appears in as its parent; none for an empty text", () => {
    const parts: ReadonlyArray<TextPart> = [
      { artifactId: 20, entities: [a!], edges: [] },
      { artifactId: 21, entities: [b!, a!], edges: [edge(2, 1), edge(2, 1), edge(2, 9)] }
    ]
    expect(keyEntities(parts).map((k) => [k.entity.name, k.parentArtifactId])).toEqual([["B", 21], ["A", 20]])
    expect(keyEntities([])).toEqual([])
    expect(keyEntities(parts, 1)).toHaveLength(1)
  })

  it("property: at most 3, distinct, sorted by facts, and no left-out entity has more facts than a chosen one", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 8 })), { maxLength: 20 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 8 }), { maxLength: 8 }),
        (pairs, ids) => {
          const part: TextPart = {
            artifactId: 1,
            entities: ids.map((id) => entity(id, `E${id}`)),
            edges: pairs.map(([s, t]) => edge(s, t))
          }
          const keys = keyEntities([part])
          expect(keys.length).toBe(Math.min(3, ids.length))
          expect(new Set(keys.map((k) => k.entity.id)).size).toBe(keys.length)
          for (let i = 1; i < keys.length; i++) expect(keys[i - 1]!.facts).toBeGreaterThanOrEqual(keys[i]!.facts)
          const chosen = new Set(keys.map((k) => k.entity.id))
          const least = keys.at(-1)?.facts ?? 0
          for (const id of ids) {
            if (chosen.has(id)) continue
            const facts = part.edges.filter((e) => e.source_id === id || e.target_id === id).length
            expect(facts).toBeLessThanOrEqual(least)
          }
        }
      )
    )
  })
})

describe("detect_geo", () => {
  const berlin = entity(1, "Berlin", "place", "capital of Germany")
  const alice = entity(2, "Alice Smith", "person")
  const tower = entity(3, "Eiffel Tower", "landmark")

  it("sends the entities (names, types, descriptions) as JSON and asks for the contract's form", () => {
    const prompt = buildDetectGeoPrompt([berlin, alice])
    expect(JSON.parse(prompt.user)).toEqual({
      entities: [
        { name: "Berlin", type: "place", description: "capital of Germany" },
        { name: "Alice Smith", type: "person" }
      ]
    })
    expect(prompt.system).toContain(`{"places": [{"entity": "Berlin", "kind": "city", "query": "Berlin, Germany"}]}`)
  })

  it("matches places to entities by name or normalized name, in fences; ignores unknown entities, kinds and repeats", () => {
    const answer = "```json\n" + JSON.stringify({
      places: [
        { entity: "berlin ", kind: "City", query: "Berlin, Germany" },
        { entity: "Atlantis", kind: "city", query: "Atlantis" },
        { entity: "Eiffel Tower", kind: "building", query: "Eiffel Tower, Paris" },
        { entity: "Berlin", kind: "city", query: "Berlin" },
        { entity: "Alice Smith", kind: "landmark", query: "" }
      ]
    }) + "\n```"
    const result = parseDetectGeo(answer, [berlin, alice, tower])
    expect(Either.isRight(result)).toBe(true)
    const { ignored, places } = Either.getOrThrow(result)
    expect(places.map((p) => [p.entity.id, p.kind, p.query])).toEqual([
      [1, "city", "Berlin, Germany"],
      // an empty query is the entity's name
      [2, "landmark", "Alice Smith"]
    ])
    expect(ignored).toEqual([
      "Atlantis: not an entity of the text",
      `Eiffel Tower: unknown kind "building"`,
      "Berlin: listed twice"
    ])
  })

  it("an answer without places, or not JSON, is a Left naming the stage", () => {
    expect(Either.getOrThrow(parseDetectGeo(`{"places": []}`, [berlin])).places).toEqual([])
    expect(Either.getLeft(parseDetectGeo("Berlin is a city.", [berlin]))).toEqual(
      Option.some(expect.stringMatching(/^detect_geo answer is not JSON/))
    )
    expect(Either.getLeft(parseDetectGeo(`{"place": []}`, [berlin]))).toEqual(
      Option.some(expect.stringMatching(/^detect_geo answer is invalid/))
    )
  })
})

describe("web search answer", () => {
  it("the tool is the server-side web search with at most 3 uses; the prompt names the entity and the reference time", () => {
    expect(WEB_SEARCH_TOOL).toEqual({ type: "web_search_20250305", name: "web_search", max_uses: 3 })
    const prompt = buildWebSearchPrompt({
      referenceTime: "2025-02-01T00:00:00.000Z",
      entity: entity(1, "Acme Corp", "organization", "maker of anvils")
    })
    expect(prompt.user).toContain("Reference time: 2025-02-01T00:00:00.000Z")
    expect(prompt.user).toContain("Entity: Acme Corp (organization): maker of anvils")
    expect(prompt.system).toMatch(/latest|most recent/)
  })

  it("reads the queries, the sources (deduplicated by url) and the text after the last search", () => {
    const blocks = webSearchBlocks({
      preamble: "I'll search for the latest news.",
      searches: [
        {
          query: "Acme Corp news",
          results: [{ url: "https://a.test/1", title: "One", page_age: "April 30, 2025" }, {
            url: "https://a.test/2",
            title: "Two"
          }]
        },
        { query: "Acme Corp 2025", results: [{ url: "https://a.test/1", title: "One again" }] }
      ],
      text: ["On 2025-01-20 Acme Corp ", "opened a plant in Ohio."]
    })
    expect(readWebSearchAnswer(blocks)).toEqual({
      text: "On 2025-01-20 Acme Corp opened a plant in Ohio.",
      queries: ["Acme Corp news", "Acme Corp 2025"],
      sources: [
        { url: "https://a.test/1", title: "One", page_age: "April 30, 2025" },
        { url: "https://a.test/2", title: "Two", page_age: null }
      ],
      toolErrors: []
    })
  })

  it("reports a tool error inside the answer, and keeps all text when nothing was searched", () => {
    const failed = readWebSearchAnswer(
      webSearchBlocks({ searches: [{ query: "Acme", errorCode: "max_uses_exceeded" }], text: [] })
    )
    expect(failed).toEqual({ text: "", queries: ["Acme"], sources: [], toolErrors: ["max_uses_exceeded"] })
    expect(readWebSearchAnswer([{ type: "text", text: " Plain. " }, null, 7, { type: "thinking" }]).text).toBe("Plain.")
  })
})

describe("parseNominatim", () => {
  it("reads jsonv2 (coordinates as strings) and the address fields", () => {
    expect(parseNominatim([nominatimResult(BERLIN)])).toEqual(Option.some({
      latitude: 52.5170365,
      longitude: 13.3888599,
      display_name: "Berlin, Deutschland",
      country: "Deutschland",
      country_code: "de",
      region: "Berlin"
    }))
  })

  it("[] is unresolved; anything else is not an answer", () => {
    expect(parseNominatim([])).toEqual(Option.none())
    expect(parseNominatim({ error: "x" })).toBeUndefined()
    expect(parseNominatim([{ lat: "north", lon: "1" }])).toBeUndefined()
    expect(parseNominatim([{ lat: "1.5", lon: "2.5" }])).toEqual(Option.some({
      latitude: 1.5,
      longitude: 2.5,
      display_name: "",
      country: null,
      country_code: null,
      region: null
    }))
  })
})

describe("the server's enrichments (layers/App.ts)", () => {
  const key = Option.some(Redacted.make("secret"))
  const config = (patch: (c: AppConfig) => AppConfig) => patch(defaultConfig)

  it("web search only for the Anthropic LLM with a key", () => {
    expect(webSearchAvailable(defaultConfig)).toBe(false)
    expect(webSearchAvailable(config((c) => ({ ...c, llm: { ...c.llm, apiKey: key } })))).toBe(true)
    expect(webSearchAvailable(config((c) => ({ ...c, llm: { ...c.llm, provider: "openai", apiKey: key } })))).toBe(
      false
    )
  })

  it("Jev when jev_api_key is set; Nominatim when geo is on", () => {
    const enabled = (layer: ReturnType<typeof classifierFor>) =>
      Effect.runSync(Effect.map(ComplexityClassifier, (c) => c.enabled).pipe(Effect.provide(layer)))
    expect(enabled(classifierFor(defaultConfig))).toBe(false)
    expect(enabled(classifierFor({ ...defaultConfig, jevApiKey: key }))).toBe(true)
    const geo = (c: AppConfig) =>
      Effect.runSync(
        Effect.serviceOption(GeoResolver).pipe(Effect.provide(geoFor(c)), Effect.map(Option.map((g) => g.provider)))
      )
    expect(geo(defaultConfig)).toEqual(Option.none())
    expect(geo({ ...defaultConfig, geo: { ...defaultConfig.geo, enabled: true } })).toEqual(Option.some("nominatim"))
  })
})
