/**
 * `gligabao schema set|get` of the real CLI on a SQLite file (docs/SCHEMA.md): `set` reads the
 * document from --file or stdin, validates it as the endpoint does (a bad field fails with one
 * line naming it, nothing stored), creates the dataset, and prints the schema as stored; `get`
 * prints it, the empty schema for a dataset without one.
 */
import Database from "better-sqlite3"
import { spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { BIN, runCli, tempDir } from "../support/cli.js"

const dir = tempDir("gligabao-e2e-schema-")
const db = join(dir.path, "schema.db")
const file = join(dir.path, "schema.json")

afterAll(() => dir.remove())

const EMPTY = {
  entity_types: [],
  allow_other_entity_types: true,
  edge_types: [],
  allow_other_edge_types: true,
  instructions: null
}

describe("gligabao schema", () => {
  it("set stores a schema from a file and prints it as stored; get prints it", async () => {
    const none = await runCli(["schema", "get", "--user-id", "alice", "--db", db])
    expect(none.code, none.stderr).toBe(0)
    expect(JSON.parse(none.stdout)).toEqual(EMPTY)

    writeFileSync(
      file,
      JSON.stringify({
        entity_types: [{ name: "Ticket", description: "a support request" }],
        edge_types: [{ name: "Assigned To", description: "who works on it", exclusive: "per_source" }]
      })
    )
    const set = await runCli([
      "schema",
      "set",
      "--user-id",
      "alice",
      "--dataset",
      "support",
      "--file",
      file,
      "--db",
      db
    ])
    expect(set.code, set.stderr).toBe(0)
    const stored = JSON.parse(set.stdout)
    expect(stored.entity_types[0].name).toBe("ticket")
    expect(stored.edge_types[0]).toMatchObject({ name: "assigned_to", exclusive: "per_source" })

    const got = await runCli(["schema", "get", "--user-id", "alice", "--dataset", "support", "--db", db])
    expect(JSON.parse(got.stdout)).toEqual(stored)
    const conn = new Database(db, { readonly: true })
    try {
      expect(conn.prepare("SELECT name FROM gb_datasets WHERE user_id = 'alice'").all()).toEqual([{ name: "support" }])
    } finally {
      conn.close()
    }
  })

  it("set reads stdin without --file, and a bad document fails naming the field, storing nothing", () => {
    const piped = spawnSync(process.execPath, [BIN, "schema", "set", "--user-id", "bob", "--db", db], {
      input: JSON.stringify({ instructions: "Only customers." }),
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", GLIGABAO_LOG_LEVEL: "warning" },
      cwd: dir.path,
      encoding: "utf8",
      timeout: 60_000
    })
    expect(piped.status, piped.stderr).toBe(0)
    expect(JSON.parse(piped.stdout)).toEqual({ ...EMPTY, instructions: "Only customers." })

    writeFileSync(file, JSON.stringify({ edge_types: [{ name: "x", description: "y", exclusiv: "per_source" }] }))
    return runCli(["schema", "set", "--user-id", "carol", "--file", file, "--db", db]).then((bad) => {
      expect(bad.code).not.toBe(0)
      expect(bad.stderr).toContain(
        "gligabao: unknown field \"edge_types[0].exclusiv\" (did you mean \"edge_types[0].exclusive\"?)"
      )
      const conn = new Database(db, { readonly: true })
      try {
        expect(conn.prepare("SELECT COUNT(*) AS n FROM gb_datasets WHERE user_id = 'carol'").get()).toEqual({ n: 0 })
      } finally {
        conn.close()
      }
    })
  })
})
