/**
 * A big dataset written straight into a migrated SQLite file with better-sqlite3: one
 * transaction, prepared statements. Dataset "big" (or another name) of user "bench": `edges` facts "Pa knows Pb"
 * among edges/5 people `P0`, `P1`, ..., one artifact per 10 facts (linked in
 * gb_edge_artifacts, and each person to the first artifact naming it). The schema's triggers
 * index every row in full text as the server's own inserts would be.
 */
import Database from "better-sqlite3"

export const BIG = { user: "bench", dataset: "big" } as const

export const seedEdges = (
  file: string,
  edges: number,
  dataset: string = BIG.dataset
): { people: number; seconds: number } => {
  const started = performance.now()
  const people = Math.max(100, Math.floor(edges / 5))
  const db = new Database(file)
  // the indexes of 1M rows fit in memory: a page cache large enough keeps inserts off the disk
  db.pragma("cache_size = -1048576")
  const start = Date.UTC(2020, 0, 1)
  const iso = (i: number) => new Date(start + i * 1000).toISOString()
  db.transaction(() => {
    const now = iso(0)
    const datasetId = Number(
      db.prepare("INSERT INTO gb_datasets (user_id, name, created_at) VALUES (?, ?, ?)").run(BIG.user, dataset, now)
        .lastInsertRowid
    )
    const entity = db.prepare(
      "INSERT INTO gb_entities (dataset_id, name, name_key, type, description, created_at, updated_at) VALUES (?, ?, ?, 'person', 'a person', ?, ?)"
    )
    const ids: Array<number> = []
    for (let i = 0; i < people; i++) ids.push(Number(entity.run(datasetId, `P${i}`, `p${i}`, now, now).lastInsertRowid))

    const artifact = db.prepare(
      "INSERT INTO gb_artifacts (dataset_id, kind, text, valid_at, created_at) VALUES (?, 'knowledge', ?, ?, ?)"
    )
    const edge = db.prepare(
      "INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, valid_at, created_at, artifact_id) VALUES (?, ?, ?, 'knows', ?, ?, ?, ?)"
    )
    const edgeArtifact = db.prepare("INSERT INTO gb_edge_artifacts (edge_id, artifact_id) VALUES (?, ?)")
    const entityArtifact = db.prepare(
      "INSERT OR IGNORE INTO gb_entity_artifacts (entity_id, artifact_id) VALUES (?, ?)"
    )
    const linked = new Uint8Array(people)
    let x = 42
    const rand = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % people
    for (let from = 0; from < edges; from += 10) {
      const n = Math.min(10, edges - from)
      const pairs = Array.from({ length: n }, () => {
        const a = rand()
        let b = rand()
        if (b === a) b = (b + 1) % people
        return [a, b] as const
      })
      const at = iso(from)
      const artifactId = Number(
        artifact.run(datasetId, pairs.map(([a, b]) => `P${a} knows P${b}.`).join(" "), at, at).lastInsertRowid
      )
      for (const [a, b] of pairs) {
        const edgeId = Number(
          edge.run(datasetId, ids[a], ids[b], `P${a} knows P${b}`, at, at, artifactId).lastInsertRowid
        )
        edgeArtifact.run(edgeId, artifactId)
        for (const p of [a, b]) {
          if (linked[p] === 0) {
            linked[p] = 1
            entityArtifact.run(ids[p], artifactId)
          }
        }
      }
    }
  })()
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
  return { people, seconds: (performance.now() - started) / 1000 }
}
