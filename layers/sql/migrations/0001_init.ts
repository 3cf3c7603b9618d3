/**
 * The whole gb_ schema, both dialects. Dialects differ only in a few column types, given by the
 * `types` table below; every statement is otherwise shared. Times are TEXT (RFC 3339 UTC with
 * milliseconds, so they sort as text) and JSON is TEXT (decoded by the repositories): see
 * docs/ARCHITECTURE.md, "Storage".
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

interface ColumnTypes {
  /** an auto-incrementing integer primary key */
  readonly pk: string
  /** a column referencing such a key */
  readonly ref: string
  /** RFC 3339 text; on PostgreSQL bytewise collation so ordering never depends on the locale */
  readonly time: string
  readonly real: string
}

const types = {
  sqlite: {
    pk: "INTEGER PRIMARY KEY AUTOINCREMENT",
    ref: "INTEGER",
    time: "TEXT",
    real: "REAL"
  },
  pg: {
    pk: "BIGSERIAL PRIMARY KEY",
    ref: "BIGINT",
    time: `TEXT COLLATE "C"`,
    real: "DOUBLE PRECISION"
  }
} satisfies Record<string, ColumnTypes>

const statements = ({ pk, real, ref, time }: ColumnTypes): ReadonlyArray<string> => [
  `CREATE TABLE gb_datasets (
    id ${pk},
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at ${time} NOT NULL,
    deleted_at ${time}
  )`,
  `CREATE UNIQUE INDEX gb_datasets_live_name ON gb_datasets (user_id, name) WHERE deleted_at IS NULL`,

  `CREATE TABLE gb_models (
    id ${pk},
    provider TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at ${time} NOT NULL,
    UNIQUE (provider, name)
  )`,

  `CREATE TABLE gb_instances (
    id TEXT PRIMARY KEY,
    started_at ${time} NOT NULL,
    heartbeat_at ${time} NOT NULL
  )`,

  // artifact_id has no foreign key: runs are a log and outlive what they point at
  `CREATE TABLE gb_remember_runs (
    id ${pk},
    pipeline TEXT NOT NULL,
    user_id TEXT NOT NULL,
    dataset TEXT NOT NULL,
    dataset_id ${ref} REFERENCES gb_datasets (id) ON DELETE SET NULL,
    artifact_id ${ref},
    status TEXT NOT NULL,
    error TEXT,
    params TEXT NOT NULL,
    queued_at ${time} NOT NULL,
    instance_id TEXT NOT NULL,
    started_at ${time},
    finished_at ${time},
    duration_ms ${ref}
  )`,
  `CREATE INDEX gb_remember_runs_status ON gb_remember_runs (status)`,
  `CREATE INDEX gb_remember_runs_user_dataset ON gb_remember_runs (user_id, dataset)`,
  `CREATE INDEX gb_remember_runs_queued ON gb_remember_runs (queued_at, id)`,

  `CREATE TABLE gb_remember_run_stages (
    run_id ${ref} NOT NULL REFERENCES gb_remember_runs (id) ON DELETE CASCADE,
    stage TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at ${time},
    finished_at ${time},
    duration_ms ${ref},
    error TEXT,
    inference_ids TEXT NOT NULL DEFAULT '[]',
    progress TEXT,
    detail TEXT,
    PRIMARY KEY (run_id, stage)
  )`,

  `CREATE TABLE gb_inferences (
    id ${pk},
    type TEXT NOT NULL,
    stage TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    model_id ${ref} REFERENCES gb_models (id),
    reasoning TEXT NOT NULL,
    input_tokens ${ref} NOT NULL DEFAULT 0,
    output_tokens ${ref} NOT NULL DEFAULT 0,
    cache_read_tokens ${ref} NOT NULL DEFAULT 0,
    cache_write_tokens ${ref} NOT NULL DEFAULT 0,
    web_search_requests ${ref} NOT NULL DEFAULT 0,
    cost_usd ${real} NOT NULL DEFAULT 0,
    latency_ms ${ref} NOT NULL DEFAULT 0,
    started_at ${time} NOT NULL,
    error TEXT,
    run_id ${ref} REFERENCES gb_remember_runs (id) ON DELETE SET NULL,
    dataset_id ${ref} REFERENCES gb_datasets (id) ON DELETE SET NULL
  )`,
  `CREATE INDEX gb_inferences_run ON gb_inferences (run_id)`,
  `CREATE INDEX gb_inferences_stage_model ON gb_inferences (stage, model)`,

  `CREATE TABLE gb_artifacts (
    id ${pk},
    dataset_id ${ref} NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    parent_id ${ref} REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    session_id TEXT,
    valid_at ${time} NOT NULL,
    created_at ${time} NOT NULL,
    inference_id ${ref} REFERENCES gb_inferences (id) ON DELETE SET NULL,
    query TEXT,
    metadata TEXT
  )`,
  `CREATE INDEX gb_artifacts_dataset_created ON gb_artifacts (dataset_id, created_at)`,
  `CREATE INDEX gb_artifacts_parent ON gb_artifacts (parent_id)`,
  `CREATE INDEX gb_artifacts_dataset_session ON gb_artifacts (dataset_id, session_id)`,

  `CREATE TABLE gb_entities (
    id ${pk},
    dataset_id ${ref} NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    model_id ${ref} REFERENCES gb_models (id),
    created_at ${time} NOT NULL,
    updated_at ${time} NOT NULL,
    UNIQUE (dataset_id, name_key, type)
  )`,
  `CREATE INDEX gb_entities_dataset_name_key ON gb_entities (dataset_id, name_key)`,

  `CREATE TABLE gb_edges (
    id ${pk},
    dataset_id ${ref} NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    source_id ${ref} NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    target_id ${ref} NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    relation TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    valid_at ${time} NOT NULL,
    invalid_at ${time},
    created_at ${time} NOT NULL,
    expired_at ${time},
    artifact_id ${ref} REFERENCES gb_artifacts (id) ON DELETE SET NULL,
    model_id ${ref} REFERENCES gb_models (id)
  )`,
  // candidate loading: live edges by endpoint, newest first
  `CREATE INDEX gb_edges_live_source ON gb_edges (source_id, created_at) WHERE expired_at IS NULL`,
  `CREATE INDEX gb_edges_live_target ON gb_edges (target_id, created_at) WHERE expired_at IS NULL`,
  `CREATE INDEX gb_edges_dataset_triple ON gb_edges (dataset_id, source_id, target_id, relation)`,

  `CREATE TABLE gb_entity_artifacts (
    entity_id ${ref} NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    artifact_id ${ref} NOT NULL REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, artifact_id)
  )`,
  `CREATE INDEX gb_entity_artifacts_artifact ON gb_entity_artifacts (artifact_id)`,
  `CREATE TABLE gb_edge_artifacts (
    edge_id ${ref} NOT NULL REFERENCES gb_edges (id) ON DELETE CASCADE,
    artifact_id ${ref} NOT NULL REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    PRIMARY KEY (edge_id, artifact_id)
  )`,
  `CREATE INDEX gb_edge_artifacts_artifact ON gb_edge_artifacts (artifact_id)`,

  // session links survive the artifact: they record that the session discovered the row
  `CREATE TABLE gb_entity_sessions (
    entity_id ${ref} NOT NULL REFERENCES gb_entities (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    PRIMARY KEY (entity_id, session_id)
  )`,
  `CREATE INDEX gb_entity_sessions_session ON gb_entity_sessions (session_id)`,
  `CREATE TABLE gb_edge_sessions (
    edge_id ${ref} NOT NULL REFERENCES gb_edges (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    PRIMARY KEY (edge_id, session_id)
  )`,
  `CREATE INDEX gb_edge_sessions_session ON gb_edge_sessions (session_id)`,

  `CREATE TABLE gb_image_artifacts (
    id ${pk},
    dataset_id ${ref} NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    session_id TEXT,
    sha256 TEXT NOT NULL,
    path TEXT NOT NULL,
    media_type TEXT NOT NULL,
    bytes ${ref} NOT NULL,
    valid_at ${time} NOT NULL,
    created_at ${time} NOT NULL,
    UNIQUE (dataset_id, sha256)
  )`,
  `CREATE TABLE gb_image_extractions (
    id ${pk},
    image_artifact_id ${ref} NOT NULL REFERENCES gb_image_artifacts (id) ON DELETE CASCADE,
    inference_id ${ref} REFERENCES gb_inferences (id) ON DELETE SET NULL,
    model TEXT NOT NULL,
    provider TEXT NOT NULL,
    reasoning TEXT NOT NULL,
    theme TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    input_tokens ${ref} NOT NULL DEFAULT 0,
    output_tokens ${ref} NOT NULL DEFAULT 0,
    cost_usd ${real} NOT NULL DEFAULT 0,
    created_at ${time} NOT NULL
  )`,
  `CREATE INDEX gb_image_extractions_image ON gb_image_extractions (image_artifact_id, created_at)`,
  `CREATE TABLE gb_image_text_blocks (
    id ${pk},
    extraction_id ${ref} NOT NULL REFERENCES gb_image_extractions (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL
  )`,
  `CREATE INDEX gb_image_text_blocks_extraction ON gb_image_text_blocks (extraction_id, position)`,

  // resolved is 0/1 on both dialects, so one repository code reads and writes it
  `CREATE TABLE gb_entity_geo (
    entity_id ${ref} PRIMARY KEY REFERENCES gb_entities (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    query TEXT NOT NULL,
    resolved INTEGER NOT NULL DEFAULT 0 CHECK (resolved IN (0, 1)),
    latitude ${real},
    longitude ${real},
    display_name TEXT,
    country TEXT,
    country_code TEXT,
    region TEXT,
    provider TEXT,
    error TEXT,
    created_at ${time} NOT NULL
  )`,

  `CREATE TABLE gb_series (
    id ${pk},
    dataset_id ${ref} NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    unit TEXT,
    created_at ${time} NOT NULL,
    UNIQUE (dataset_id, key)
  )`,
  `CREATE TABLE gb_series_points (
    series_id ${ref} NOT NULL REFERENCES gb_series (id) ON DELETE CASCADE,
    ts ${time} NOT NULL,
    value ${real} NOT NULL,
    PRIMARY KEY (series_id, ts)
  )`,
  `CREATE TABLE gb_series_anchors (
    id ${pk},
    series_id ${ref} NOT NULL REFERENCES gb_series (id) ON DELETE CASCADE,
    artifact_id ${ref} REFERENCES gb_artifacts (id) ON DELETE CASCADE,
    entity_id ${ref} REFERENCES gb_entities (id) ON DELETE CASCADE,
    edge_id ${ref} REFERENCES gb_edges (id) ON DELETE CASCADE
  )`,
  `CREATE INDEX gb_series_anchors_series ON gb_series_anchors (series_id)`,

  `CREATE TABLE gb_vector_outbox (
    id ${pk},
    dataset_id ${ref} NOT NULL,
    index_name TEXT NOT NULL,
    vector_id TEXT NOT NULL,
    text_or_values TEXT NOT NULL,
    metadata TEXT,
    created_at ${time} NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
  )`,
  `CREATE INDEX gb_vector_outbox_created ON gb_vector_outbox (created_at)`
]

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columnTypes = sql.onDialectOrElse({ pg: () => types.pg, orElse: () => types.sqlite })
  for (const statement of statements(columnTypes)) {
    yield* sql.unsafe(statement)
  }
})
