/** Reading a server's SQLite file from the bench, once the server has stopped. */
import Database from "better-sqlite3"

/** Read-only; a WAL left behind (a killed server) needs a writable open to be read. */
export const openReadonly = (file: string): Database.Database => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    db.prepare("SELECT 1 FROM gb_entities LIMIT 1").get()
    return db
  } catch {
    db.close()
    return new Database(file, { fileMustExist: true })
  }
}

/**
 * A dataset's graph as two runs that must agree compare it: entities by (name, type) and live
 * facts by (source, relation, target, validity), sorted, as one string.
 */
export const graphOf = (file: string, dataset: string): string => {
  const db = openReadonly(file)
  try {
    const entities = db.prepare(
      "SELECT e.name, e.type FROM gb_entities e JOIN gb_datasets d ON d.id = e.dataset_id WHERE d.name = ? ORDER BY 1, 2"
    ).all(dataset)
    const facts = db.prepare(
      `SELECT s.name AS source, f.relation, t.name AS target, f.valid_at, f.invalid_at
       FROM gb_edges f JOIN gb_entities s ON s.id = f.source_id JOIN gb_entities t ON t.id = f.target_id
       JOIN gb_datasets d ON d.id = f.dataset_id
       WHERE d.name = ? AND f.expired_at IS NULL ORDER BY 1, 2, 3, 4, 5`
    ).all(dataset)
    return JSON.stringify({ entities, facts })
  } finally {
    db.close()
  }
}
