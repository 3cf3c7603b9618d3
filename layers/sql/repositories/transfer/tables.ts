/**
 * The tables a dump reads and a load writes (TransferRepo, docs/TRANSFER.md): each one's
 * columns, its JSON columns, the key its pages follow, and how its rows are found for a user's
 * dataset name or a dataset row. Child tables are read through their parent (`p`), the bound
 * `p.id >= <cursor's first column>` keeping a page an index range of the parent, so that a dump
 * of many datasets reads each table once, not once a dataset.
 */
import type { IdKind, TableKind } from "../../../../src/services/TransferRepo.js"

export type Scope = "all" | "group" | "dataset"

export interface TableSpec {
  readonly table: string
  /** the row's fields, in the table's (t) columns unless `select` says otherwise */
  readonly columns: ReadonlyArray<string>
  /** the columns holding JSON text */
  readonly json: ReadonlyArray<string>
  /** the fields of the key pages follow, in order (unique per row) */
  readonly key: ReadonlyArray<string>
  /** `FROM ...` naming the table t (and its parent p), per scope it is read in */
  readonly from: Partial<Record<Scope, string>>
  /** a field read from another expression than `t.<field>` */
  readonly select?: Readonly<Record<string, string>>
  /** whether the key's first field is the parent's id (then bounded by `p.id >=`) */
  readonly bounded?: boolean
}

const cols = (list: string) => list.split(",").map((c) => c.trim())

const direct = (table: string) => ({ dataset: `${table} t` })
const viaEntity = (table: string) => ({ dataset: `gb_entities p JOIN ${table} t ON t.entity_id = p.id` })
const viaEdge = (table: string) => ({ dataset: `gb_edges p JOIN ${table} t ON t.edge_id = p.id` })
const viaSeries = (table: string) => ({ dataset: `gb_series p JOIN ${table} t ON t.series_id = p.id` })
const viaRun = (table: string) => ({ group: `gb_remember_runs p JOIN ${table} t ON t.run_id = p.id` })

export const TABLES: Record<TableKind, TableSpec> = {
  model: {
    table: "gb_models",
    columns: cols("id, provider, name, created_at"),
    json: [],
    key: ["id"],
    from: { all: "gb_models t" }
  },
  dataset: {
    table: "gb_datasets",
    columns: cols("id, user_id, name, created_at, deleted_at, schema"),
    json: ["schema"],
    key: ["id"],
    from: { group: "gb_datasets t" }
  },
  run: {
    table: "gb_remember_runs",
    columns: cols(
      "id, pipeline, user_id, dataset, dataset_id, status, error, error_tag, params, queued_at, instance_id, " +
        "started_at, finished_at, duration_ms, attempts"
    ),
    json: ["params"],
    key: ["id"],
    from: { group: "gb_remember_runs t" }
  },
  run_result: {
    table: "gb_remember_runs",
    columns: cols("run_id, artifact_id, response"),
    json: ["response"],
    key: ["run_id"],
    select: { run_id: "t.id" },
    from: { group: "gb_remember_runs t" }
  },
  run_stage: {
    table: "gb_remember_run_stages",
    columns: cols(
      "run_id, stage, status, started_at, finished_at, duration_ms, error, inference_ids, progress, detail"
    ),
    json: ["inference_ids", "progress", "detail"],
    key: ["run_id", "stage"],
    bounded: true,
    from: viaRun("gb_remember_run_stages")
  },
  run_queue: {
    table: "gb_remember_queue",
    columns: cols("run_id, request, document_id, stored_chunks"),
    json: ["request"],
    key: ["run_id"],
    bounded: true,
    from: viaRun("gb_remember_queue")
  },
  idempotency_key: {
    table: "gb_remember_idempotency",
    columns: cols("user_id, idempotency_key, request_hash, run_id, created_at"),
    json: [],
    key: ["run_id", "idempotency_key"],
    bounded: true,
    from: viaRun("gb_remember_idempotency")
  },
  inference: {
    table: "gb_inferences",
    columns: cols(
      "id, type, stage, provider, model, model_id, reasoning, input_tokens, output_tokens, cache_read_tokens, " +
        "cache_write_tokens, web_search_requests, cost_usd, latency_ms, started_at, error, run_id, dataset_id, structured_mode"
    ),
    json: [],
    key: ["id"],
    // a model call belongs to its dataset, or (none named) to its run's user and dataset name, or to no one
    from: { all: "gb_inferences t", group: "gb_inferences t", dataset: "gb_inferences t" }
  },
  series: {
    table: "gb_series",
    columns: cols("id, dataset_id, key, unit, created_at"),
    json: [],
    key: ["id"],
    from: direct("gb_series")
  },
  series_point: {
    table: "gb_series_points",
    columns: cols("series_id, ts, value"),
    json: [],
    key: ["series_id", "ts"],
    bounded: true,
    from: viaSeries("gb_series_points")
  },
  artifact: {
    table: "gb_artifacts",
    columns: cols(
      "id, dataset_id, kind, text, parent_id, session_id, valid_at, created_at, inference_id, query, metadata"
    ),
    json: ["metadata"],
    key: ["id"],
    from: direct("gb_artifacts")
  },
  entity: {
    table: "gb_entities",
    columns: cols(
      "id, dataset_id, name, name_key, type, description, model_id, created_at, updated_at, embedded_at, attributes"
    ),
    json: ["attributes"],
    key: ["id"],
    from: direct("gb_entities")
  },
  edge: {
    table: "gb_edges",
    columns: cols(
      "id, dataset_id, source_id, target_id, relation, description, valid_at, invalid_at, created_at, expired_at, " +
        "artifact_id, model_id, embedded_at"
    ),
    json: [],
    key: ["id"],
    from: direct("gb_edges")
  },
  entity_artifact: {
    table: "gb_entity_artifacts",
    columns: cols("entity_id, artifact_id, name, description, attributes"),
    json: ["attributes"],
    key: ["entity_id", "artifact_id"],
    bounded: true,
    from: viaEntity("gb_entity_artifacts")
  },
  edge_artifact: {
    table: "gb_edge_artifacts",
    columns: cols("edge_id, artifact_id, description, valid_at, invalid_at"),
    json: [],
    key: ["edge_id", "artifact_id"],
    bounded: true,
    from: viaEdge("gb_edge_artifacts")
  },
  entity_session: {
    table: "gb_entity_sessions",
    columns: cols("entity_id, session_id"),
    json: [],
    key: ["entity_id", "session_id"],
    bounded: true,
    from: viaEntity("gb_entity_sessions")
  },
  edge_session: {
    table: "gb_edge_sessions",
    columns: cols("edge_id, session_id"),
    json: [],
    key: ["edge_id", "session_id"],
    bounded: true,
    from: viaEdge("gb_edge_sessions")
  },
  edge_closure: {
    table: "gb_edge_closures",
    columns: cols("id, edge_id, by_edge_id, artifact_id, kind, invalid_at, expired_at, prev_invalid_at, created_at"),
    json: [],
    // by the closed fact, then in the order they were decided (the order forget's rules read them in)
    key: ["edge_id", "id"],
    bounded: true,
    from: viaEdge("gb_edge_closures")
  },
  entity_geo: {
    table: "gb_entity_geo",
    columns: cols(
      "entity_id, kind, query, resolved, latitude, longitude, display_name, country, country_code, region, provider, " +
        "error, created_at"
    ),
    json: [],
    key: ["entity_id"],
    bounded: true,
    from: viaEntity("gb_entity_geo")
  },
  image: {
    table: "gb_image_artifacts",
    columns: cols("id, dataset_id, session_id, sha256, path, media_type, bytes, valid_at, created_at"),
    json: [],
    key: ["id"],
    from: direct("gb_image_artifacts")
  },
  image_extraction: {
    table: "gb_image_extractions",
    columns: cols(
      "id, image_artifact_id, inference_id, model, provider, reasoning, theme, title, text, input_tokens, " +
        "output_tokens, cost_usd, created_at"
    ),
    json: [],
    key: ["image_artifact_id", "id"],
    bounded: true,
    from: { dataset: "gb_image_artifacts p JOIN gb_image_extractions t ON t.image_artifact_id = p.id" }
  },
  image_text_block: {
    table: "gb_image_text_blocks",
    columns: cols("id, extraction_id, position, kind, text"),
    json: [],
    key: ["extraction_id", "id"],
    from: {
      dataset: "gb_image_artifacts p JOIN gb_image_extractions x ON x.image_artifact_id = p.id " +
        "JOIN gb_image_text_blocks t ON t.extraction_id = x.id"
    }
  },
  series_anchor: {
    table: "gb_series_anchors",
    columns: cols("id, series_id, artifact_id, entity_id, edge_id"),
    json: [],
    key: ["series_id", "id"],
    bounded: true,
    from: viaSeries("gb_series_anchors")
  }
}

/** The table of each kind whose ids a load allocates. */
export const ID_TABLES: Record<IdKind, string> = {
  dataset: "gb_datasets",
  run: "gb_remember_runs",
  inference: "gb_inferences",
  series: "gb_series",
  artifact: "gb_artifacts",
  entity: "gb_entities",
  edge: "gb_edges",
  edge_closure: "gb_edge_closures",
  image: "gb_image_artifacts",
  image_extraction: "gb_image_extractions",
  image_text_block: "gb_image_text_blocks",
  series_anchor: "gb_series_anchors"
}
