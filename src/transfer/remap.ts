/**
 * What a load does to ids (docs/TRANSFER.md): every row gets a new id in the target, so every
 * reference to a row follows its map: columns (done where each record is written), the ids
 * inside JSON the pipeline wrote (a run's response, a vector's metadata, an artifact's
 * metadata), image paths (`<dataset id>/<sha256>.<ext>`) and vector names (`dataset-<id>-<kind>`,
 * `entity-<id>`, ...). Pure functions.
 */
import type { VectorKindName } from "../domain/DumpFormat.js"
import { chunkVectorId, edgeVectorId, entityVectorId, indexName, summaryVectorId } from "../pipeline/vectors.js"

/** Old id to new id, per table; image paths old to new. */
export interface IdMaps {
  readonly models: Map<number, number>
  readonly datasets: Map<number, number>
  readonly runs: Map<number, number>
  readonly inferences: Map<number, number>
  readonly series: Map<number, number>
  readonly artifacts: Map<number, number>
  readonly entities: Map<number, number>
  readonly edges: Map<number, number>
  readonly images: Map<number, number>
  readonly extractions: Map<number, number>
  readonly imagePaths: Map<string, string>
}

export type IdTable = Exclude<keyof IdMaps, "imagePaths">

/** Fresh maps for a group; the models' map is the whole load's. */
export const groupMaps = (models: Map<number, number>): IdMaps => ({
  models,
  datasets: new Map(),
  runs: new Map(),
  inferences: new Map(),
  series: new Map(),
  artifacts: new Map(),
  entities: new Map(),
  edges: new Map(),
  images: new Map(),
  extractions: new Map(),
  imagePaths: new Map()
})

/** The id the target gave a row that no longer existed in the source when it was dumped: it names no row. */
export const GONE = 0

/** Keys whose number is a row id, wherever they appear in JSON the pipeline wrote. */
const ID_KEYS: Readonly<Record<string, IdTable>> = {
  dataset_id: "datasets",
  artifact_id: "artifacts",
  parent_artifact_id: "artifacts",
  chunk_artifact_id: "artifacts",
  entity_id: "entities",
  source_id: "entities",
  target_id: "entities",
  edge_id: "edges",
  series_id: "series",
  image_artifact_id: "images",
  extraction_id: "extractions",
  inference_id: "inferences",
  model_id: "models",
  remember_run_id: "runs"
}

/** Arrays of ids. */
const ID_LISTS: Readonly<Record<string, IdTable>> = { invalidated_edges: "edges" }

/** Arrays of objects whose `id` is a row of this table (a response's entities, edges, series). */
const ROW_LISTS: Readonly<Record<string, IdTable>> = { entities: "entities", edges: "edges", series: "series" }

const mapped = (maps: IdMaps, table: IdTable, id: unknown): unknown =>
  typeof id === "number" ? maps[table].get(id) ?? GONE : id

/**
 * JSON with every row id it names replaced by the row's new id (GONE for a row the source no
 * longer had), and every image path by the image's new path. Other values are kept as they are.
 */
export const remapJson = (value: unknown, maps: IdMaps, rowTable: IdTable | null = null): unknown => {
  if (Array.isArray(value)) return value.map((v) => remapJson(v, maps, rowTable))
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    if (key === "id" && rowTable !== null) out[key] = mapped(maps, rowTable, v)
    else if (Object.hasOwn(ID_KEYS, key)) out[key] = mapped(maps, ID_KEYS[key]!, v)
    else if (Object.hasOwn(ID_LISTS, key) && Array.isArray(v)) {
      out[key] = v.map((id) => mapped(maps, ID_LISTS[key]!, id))
    } else if (Object.hasOwn(ROW_LISTS, key) && Array.isArray(v)) out[key] = remapJson(v, maps, ROW_LISTS[key]!)
    else if (key === "path" && typeof v === "string") out[key] = maps.imagePaths.get(v) ?? v
    else out[key] = remapJson(v, maps, null)
  }
  return out
}

/** An image's path in the target: its new dataset's directory, the same file name (`<sha256>.<ext>`). */
export const imagePathIn = (datasetId: number, oldPath: string): string => {
  const name = oldPath.slice(oldPath.lastIndexOf("/") + 1)
  return `${datasetId}/${name}`
}

const VECTOR_IDS: Record<VectorKindName, (id: number) => string> = {
  entities: entityVectorId,
  edges: edgeVectorId,
  chunks: chunkVectorId,
  summaries: summaryVectorId
}

/** The table a vector's row is in. */
export const ROW_TABLE: Record<VectorKindName, IdTable> = {
  entities: "entities",
  edges: "edges",
  chunks: "artifacts",
  summaries: "artifacts"
}

export const vectorIdOf = (kind: VectorKindName, rowId: number): string => VECTOR_IDS[kind](rowId)

const INDEX = /^dataset-(\d+)-(entities|edges|chunks|summaries)$/
const VECTOR_ID = /^(?:entity|edge|chunk|summary)-(\d+)$/

/** A vector's dataset, kind and row from its index and id as the pipeline names them; undefined for any other. */
export const parseVectorName = (
  index: string,
  vectorId: string
): { readonly datasetId: number; readonly kind: VectorKindName; readonly rowId: number } | undefined => {
  const i = INDEX.exec(index)
  const v = VECTOR_ID.exec(vectorId)
  if (i === null || v === null) return undefined
  const kind = i[2] as VectorKindName
  const rowId = Number(v[1])
  return vectorIdOf(kind, rowId) === vectorId ? { datasetId: Number(i[1]), kind, rowId } : undefined
}

/** A vector's name in the target: its dataset's index, its row's id. */
export const vectorNameIn = (datasetId: number, kind: VectorKindName, rowId: number) => ({
  index: indexName(datasetId, kind),
  id: vectorIdOf(kind, rowId)
})

/**
 * A number as short as JSON can write it and still read back the same float32, when it is one
 * (sqlite-vec and PostgreSQL keep float32): a third of the digits of the double's full form.
 */
export const compactFloat = (v: number): number => {
  if (!Number.isFinite(v) || Math.fround(v) !== v) return v
  for (let digits = 1; digits < 9; digits++) {
    const short = Number(v.toPrecision(digits))
    if (Math.fround(short) === v) return short
  }
  return Number(v.toPrecision(9))
}
