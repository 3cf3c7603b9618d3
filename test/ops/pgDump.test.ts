/**
 * The PostgreSQL route of docs/DEPLOY.md (Backup and restore), as written there: pg_dump of the
 * database a server is writing to, pg_restore into an empty database, the image files copied
 * beside; a server on the restored database and the copied images answers the same graph and
 * the same image bytes. (`gligabao backup` itself refuses PostgreSQL: test/ops/backup.test.ts.)
 */
import { Effect, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import { cpSync, realpathSync } from "node:fs"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import { freshPgUrl, pgSkipReason } from "../support/databases.js"
import { findPgBinDir } from "../support/postgres.js"
import { exportGraph, imageBytes, imageOf, remember, startFakeModel } from "./world.js"

const reason = pgSkipReason()
if (reason !== null) console.warn(`!!! SKIPPING the pg_dump route: ${reason}`)

describe.skipIf(reason !== null)("the pg_dump route of docs/DEPLOY.md", { timeout: 180_000 }, () => {
  let model: Awaited<ReturnType<typeof startFakeModel>>
  const dir = tempDir("gligabao-pgdump-")
  const servers: Array<SpawnedServer> = []
  beforeAll(async () => {
    model = await startFakeModel()
  })
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await model?.fake.close()
    dir.remove()
  })

  const serve = async (url: string, images: string) => {
    const server = await startServer({ env: model.env, args: ["--database-url", url, "--image-dir", images] })
    servers.push(server)
    return server
  }

  it("a dump taken while the server runs, restored with the images copied, serves the same graph and images", async () => {
    const source = Redacted.value(await Effect.runPromise(freshPgUrl))
    const images = join(dir.path, "images")
    const server = await serve(source, images)
    await remember(server.url, { text: "Alice Novak works at Acme in 2020. Alice Novak knows Bob Stone." })
    const image = (await remember(server.url, { image: imageOf(7) })).image_artifact_id as number
    const graph = await exportGraph(server.url)

    // the installation's own bin directory (PATH may link only initdb and pg_ctl)
    const bin = dirname(realpathSync(join(findPgBinDir()!, "pg_ctl")))
    const dump = join(dir.path, "gligabao.dump")
    // the commands as docs/DEPLOY.md gives them, the URL in DATABASE_URL
    execFileSync("sh", ["-c", `"${bin}/pg_dump" --format=custom --file "${dump}" "$DATABASE_URL"`], {
      env: { ...process.env, DATABASE_URL: source }
    })
    cpSync(images, join(dir.path, "restored-images"), { recursive: true })
    await server.stop()

    const target = Redacted.value(await Effect.runPromise(freshPgUrl))
    execFileSync(
      "sh",
      ["-c", `"${bin}/pg_restore" --clean --if-exists --no-owner --dbname "$DATABASE_URL" "${dump}"`],
      { env: { ...process.env, DATABASE_URL: target } }
    )
    const restored = await serve(target, join(dir.path, "restored-images"))
    expect(await exportGraph(restored.url)).toEqual(graph)
    const bytes = await imageBytes(restored.url, image)
    expect(bytes.status).toBe(200)
    expect(bytes.bytes).toEqual(Buffer.from(imageOf(7), "base64"))
  })
})
