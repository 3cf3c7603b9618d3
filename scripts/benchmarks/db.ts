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
