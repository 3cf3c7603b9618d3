/**
 * An in-memory PGlite with its pgvector extension, served over the PostgreSQL wire protocol on a
 * free loopback port, so the adapters reach it through @effect/sql-pg as they reach a server.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { vector } from "@electric-sql/pglite/vector"

export const startPglite = async (): Promise<{ url: string; stop: () => Promise<void> }> => {
  const db = await PGlite.create({ extensions: { vector } })
  const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 20 })
  await server.start()
  return {
    url: `postgres://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`,
    stop: async () => {
      await server.stop()
      await db.close()
    }
  }
}
