/**
 * The read side: full-text search over entity names and descriptions and fact descriptions,
 * kept in step with the rows by the database itself (so the store transaction needs no change),
 * and the indexes that neighbourhood lookups and export paging need.
 *
 * - SQLite: FTS5 external-content tables (`content=gb_entities`, `content=gb_edges`, keyed by
 *   id) maintained by AFTER INSERT / UPDATE OF / DELETE triggers, which run inside whatever
 *   transaction writes the rows (and on cascading deletes). Porter stemming over unicode61
 *   with diacritics folded.
 * - PostgreSQL: a stored generated `tsvector` column (names weighted A, descriptions B) with a
 *   GIN index; the `english` configuration stems like Porter.
 *
 * Existing rows are indexed here (FTS5 'rebuild'; PostgreSQL computes the generated column when
 * it is added). On SQLite, 0013 replaces the shared FTS5 tables with a pair per dataset.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const sqlite: ReadonlyArray<string> = [
  `CREATE VIRTUAL TABLE gb_entities_fts USING fts5(
    name, description,
    content = 'gb_entities', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
  )`,
  `CREATE TRIGGER gb_entities_fts_insert AFTER INSERT ON gb_entities BEGIN
    INSERT INTO gb_entities_fts (rowid, name, description) VALUES (new.id, new.name, new.description);
  END`,
  `CREATE TRIGGER gb_entities_fts_delete AFTER DELETE ON gb_entities BEGIN
    INSERT INTO gb_entities_fts (gb_entities_fts, rowid, name, description)
      VALUES ('delete', old.id, old.name, old.description);
  END`,
  // the entity upsert sets description on every conflict; other updates do not touch the index
  `CREATE TRIGGER gb_entities_fts_update AFTER UPDATE OF name, description ON gb_entities BEGIN
    INSERT INTO gb_entities_fts (gb_entities_fts, rowid, name, description)
      VALUES ('delete', old.id, old.name, old.description);
    INSERT INTO gb_entities_fts (rowid, name, description) VALUES (new.id, new.name, new.description);
  END`,
  `INSERT INTO gb_entities_fts (gb_entities_fts) VALUES ('rebuild')`,

  `CREATE VIRTUAL TABLE gb_edges_fts USING fts5(
    description,
    content = 'gb_edges', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
  )`,
  `CREATE TRIGGER gb_edges_fts_insert AFTER INSERT ON gb_edges BEGIN
    INSERT INTO gb_edges_fts (rowid, description) VALUES (new.id, new.description);
  END`,
  `CREATE TRIGGER gb_edges_fts_delete AFTER DELETE ON gb_edges BEGIN
    INSERT INTO gb_edges_fts (gb_edges_fts, rowid, description) VALUES ('delete', old.id, old.description);
  END`,
  // closing an edge or marking it embedded changes other columns: the index is left alone
  `CREATE TRIGGER gb_edges_fts_update AFTER UPDATE OF description ON gb_edges BEGIN
    INSERT INTO gb_edges_fts (gb_edges_fts, rowid, description) VALUES ('delete', old.id, old.description);
    INSERT INTO gb_edges_fts (rowid, description) VALUES (new.id, new.description);
  END`,
  `INSERT INTO gb_edges_fts (gb_edges_fts) VALUES ('rebuild')`
]

const pg: ReadonlyArray<string> = [
  `ALTER TABLE gb_entities ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, name), 'A') ||
    setweight(to_tsvector('english'::regconfig, description), 'B')
  ) STORED`,
  `CREATE INDEX gb_entities_search ON gb_entities USING GIN (search_tsv)`,
  `ALTER TABLE gb_edges ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('english'::regconfig, description)
  ) STORED`,
  `CREATE INDEX gb_edges_search ON gb_edges USING GIN (search_tsv)`
]

const both: ReadonlyArray<string> = [
  // the facts around an entity, newest first, whatever their state (as_of may be in the past,
  // so the partial indexes on live edges are not enough)
  `CREATE INDEX gb_edges_source_created ON gb_edges (source_id, created_at)`,
  `CREATE INDEX gb_edges_target_created ON gb_edges (target_id, created_at)`,
  // export pages a dataset by id
  `CREATE INDEX gb_entities_dataset_id ON gb_entities (dataset_id, id)`,
  `CREATE INDEX gb_edges_dataset_id ON gb_edges (dataset_id, id)`,
  `CREATE INDEX gb_artifacts_dataset_id ON gb_artifacts (dataset_id, id)`
]

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const own = sql.onDialectOrElse({ pg: () => pg, orElse: () => sqlite })
  for (const statement of [...own, ...both]) {
    yield* sql.unsafe(statement)
  }
})
