/**
 * The dump format's reader (src/domain/DumpFormat.ts) and the load's id rewriting
 * (src/transfer/remap.ts), as pure functions: a newer minor version's fields and records are
 * tolerated, a newer major version refused with a message; every id the pipeline writes into
 * JSON follows its row; a float32 is written short and read back exactly.
 */
import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { FORMAT_VERSION, readHeader, readLine } from "../../src/domain/DumpFormat.js"
import {
  compactFloat,
  GONE,
  groupMaps,
  imagePathIn,
  parseVectorName,
  remapJson,
  vectorNameIn
} from "../../src/transfer/remap.js"

const header = {
  record: "header",
  format: "gligabao-dump",
  format_version: FORMAT_VERSION,
  gligabao_version: "0.1.0",
  created_at: "2025-01-01T00:00:00.000Z",
  scope: { user_id: null, dataset: null },
  source: { dialect: "sqlite", vector_store: "sqlite-vec" },
  vectors: { included: true, reason: null, embedding_model: "text-embedding-3-small", embedding_dimensions: 1536 }
}
const line = (value: unknown) => JSON.stringify(value)

describe("the header", () => {
  it("of this version is read", () => {
    expect(Either.getOrThrow(readHeader(line(header))).format_version).toBe("1.0")
  })

  it("of a newer minor version is read, its new fields left out", () => {
    const read = Either.getOrThrow(readHeader(line({ ...header, format_version: "1.7", compression: "zstd" })))
    expect(read.format_version).toBe("1.7")
    expect("compression" in read).toBe(false)
  })

  it("of a newer major version is refused, saying what to do", () => {
    expect(readHeader(line({ ...header, format_version: "2.0", gligabao_version: "3.1.0" }))).toEqual(
      Either.left(
        "the dump is format 2.0, written by gligabao 3.1.0; this gligabao reads format 1.x: load it with a newer gligabao"
      )
    )
  })

  it("of something else is refused", () => {
    expect(Either.isLeft(readHeader(undefined))).toBe(true)
    expect(readHeader(line({ record: "entity" }))).toEqual(
      Either.left("its first line is not a gligabao-dump header: this is not a gligabao dump")
    )
    expect(readHeader("\u001f\u008b binary")).toMatchObject({ _tag: "Left" })
    expect(readHeader(line({ ...header, format_version: "one" }))).toEqual(
      Either.left(`its format_version "one" is not major.minor`)
    )
  })
})

describe("a record line", () => {
  const entity = {
    record: "entity",
    id: 3,
    dataset_id: 1,
    name: "Alice",
    name_key: "alice",
    type: "person",
    description: "",
    model_id: null,
    created_at: "2025-01-01T00:00:00.000Z",
    updated_at: "2025-01-01T00:00:00.000Z",
    embedded_at: null
  }

  it("is decoded, a field this version does not know dropped", () => {
    const read = readLine(line({ ...entity, mood: "cheerful" }))
    expect(read).toEqual({ _tag: "Record", record: entity })
  })

  it("of a kind this version does not know is told apart, to be skipped", () => {
    expect(readLine(line({ record: "entity_mood", entity_id: 3 }))).toEqual({ _tag: "Unknown", kind: "entity_mood" })
  })

  it("that is not what its kind says is invalid, with the field named", () => {
    const read = readLine(line({ ...entity, id: "three" }))
    expect(read._tag).toBe("Invalid")
    expect(read._tag === "Invalid" && read.message).toMatch(/^entity: [\s\S]*id/)
    expect(readLine("{not json")._tag).toBe("Invalid")
    expect(readLine(line([1, 2]))._tag).toBe("Invalid")
  })
})

describe("ids in JSON follow their rows", () => {
  const maps = groupMaps(new Map([[1, 10]]))
  for (const [from, to] of [[1, 101], [2, 102]]) maps.entities.set(from, to)
  maps.edges.set(5, 105)
  maps.artifacts.set(7, 107)
  maps.artifacts.set(8, 108)
  maps.runs.set(3, 303)
  maps.series.set(4, 404)
  maps.inferences.set(9, 909)
  maps.imagePaths.set("1/abc.png", "6/abc.png")

  it("a run's response: its run, artifact, entities, facts, chunks and series", () => {
    const response = {
      remember_run_id: 3,
      artifact_id: 7,
      entities: [{ id: 1, name: "Alice" }, { id: 2, name: "Berlin" }],
      edges: [{ id: 5, source_id: 1, target_id: 2, artifact_id: 7, model_id: 1, description: "id 5" }],
      invalidated_edges: [5, 6],
      chunks: [{ artifact_id: 8, index: 0, entities: [{ id: 2 }], summary: { artifact_id: 8, inference_id: 9 } }],
      series: [{ id: 4, key: "AAPL.close", anchors: [{ matched: [{ entity_id: 1 }, { edge_id: 5 }] }] }],
      path: "1/abc.png"
    }
    expect(remapJson(response, maps)).toEqual({
      remember_run_id: 303,
      artifact_id: 107,
      entities: [{ id: 101, name: "Alice" }, { id: 102, name: "Berlin" }],
      edges: [{ id: 105, source_id: 101, target_id: 102, artifact_id: 107, model_id: 10, description: "id 5" }],
      // a fact gone before the dump names no row
      invalidated_edges: [105, GONE],
      chunks: [{
        artifact_id: 108,
        index: 0,
        entities: [{ id: 102 }],
        summary: { artifact_id: 108, inference_id: 909 }
      }],
      series: [{ id: 404, key: "AAPL.close", anchors: [{ matched: [{ entity_id: 101 }, { edge_id: 105 }] }] }],
      path: "6/abc.png"
    })
  })

  it("other values are kept: nulls, strings, numbers under other keys", () => {
    const metadata = { index: 3, tokens: 60, artifact_id: null, messages: [{ role: "user", start: 0, end: 12 }] }
    expect(remapJson(metadata, maps)).toEqual(metadata)
  })

  it("image paths and vector names", () => {
    expect(imagePathIn(42, "7/abc.png")).toBe("42/abc.png")
    expect(parseVectorName("dataset-7-entities", "entity-12")).toEqual({ datasetId: 7, kind: "entities", rowId: 12 })
    expect(parseVectorName("dataset-7-summaries", "summary-3")).toEqual({ datasetId: 7, kind: "summaries", rowId: 3 })
    expect(parseVectorName("dataset-7-entities", "edge-12")).toBeUndefined()
    expect(parseVectorName("other", "entity-1")).toBeUndefined()
    expect(vectorNameIn(9, "chunks", 4)).toEqual({ index: "dataset-9-chunks", id: "chunk-4" })
  })
})

describe("vector values", () => {
  it("a float32 is written in few digits and read back exactly", () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true, noDefaultInfinity: true }), (v) => {
        const short = compactFloat(v)
        // === : JSON writes -0 as 0, the same float to a vector store
        expect(Math.fround(Number(JSON.parse(JSON.stringify(short)))) === Math.fround(v)).toBe(true)
        // at most 9 significant digits (float32's), where a double's full form has 17
        expect(Number(short.toPrecision(9))).toBe(short)
      })
    )
  })

  it("a double that is not a float32 is kept whole", () => {
    expect(compactFloat(0.1)).toBe(0.1)
    expect(compactFloat(Math.fround(0.1))).toBe(0.1)
  })
})
