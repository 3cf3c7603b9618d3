/**
 * `gligabao import` stopped by a signal (issue 41, item 5), end to end with real processes on
 * both dialects and the fake model behind a gate (test/runs/world.ts): the first extractions are
 * answered, later ones wait, so the import is mid-way when the signal comes whatever the machine.
 *
 * - Locally, Ctrl-C (SIGINT): no more runs are taken, the runs already started finish, the import
 *   exits 130 and prints the items done, the items still queued and the exact `gligabao runs
 *   cancel` command; without a terminal it printed a progress line on the way. That command
 *   cancels them: `cancelled`, out of the queue, their keys released, nothing of them stored, and
 *   never extracted (not even by a server started on the database afterwards).
 * - Through a server (--url), SIGTERM: it exits 143, says the server goes on running what is
 *   queued, and names the same command with --url; run while a run is held at the gate, it
 *   cancels the queued ones and names the started one, which finishes.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, expect, it } from "vitest"
import { tempDir } from "../support/cli.js"
import { forEachDialect } from "../support/databases.js"
import {
  countOf,
  type Db,
  type GatedModel,
  gatedModel,
  openDb,
  printedCancelCommand,
  runGligabao,
  runsOf,
  serve,
  spawnGligabao,
  until
} from "./world.js"

const ITEMS = 60
/** extractions answered before the gate closes */
const OPEN = 6

const dir = tempDir("gligabao-import-stop-")
afterAll(() => dir.remove())

const sentence = (tag: string, i: number) => `${tag}${i} works at ${tag}org${i}.`

const writeItems = (tag: string) => {
  const file = join(dir.path, `${tag}.jsonl`)
  writeFileSync(file, Array.from({ length: ITEMS }, (_, i) => JSON.stringify({ text: sentence(tag, i) })).join("\n"))
  return file
}

/** A progress line as the import prints it without a terminal. */
const PROGRESS_LINE = new RegExp(`^\\d+/${ITEMS} items done, \\d+ failed, [\\d.]+ items/s$`, "m")

/** Nothing of the items of these runs is stored (no artifact, no entity) and none was extracted. */
const expectNothingOf = async (db: Db, model: GatedModel, tag: string, indexes: ReadonlyArray<number>) => {
  const entities = new Set((await db.query(`SELECT name FROM gb_entities`)).map((r) => String(r.name)))
  const texts = new Set((await db.query(`SELECT text FROM gb_artifacts`)).map((r) => String(r.text)))
  const extracted = model.extracted().join("\n")
  for (const i of indexes) {
    expect(entities.has(`${tag}${i}`), `${tag}${i}`).toBe(false)
    expect(texts.has(sentence(tag, i))).toBe(false)
    expect(extracted.includes(sentence(tag, i)), sentence(tag, i)).toBe(false)
  }
}

forEachDialect((dialect) => {
  it(
    "Ctrl-C stops a local import: exit 130, its counts and the command that cancels the rest, which does",
    async () => {
      const db = await openDb(dialect)
      const model = await gatedModel({ open: OPEN })
      try {
        const importing = spawnGligabao(
          ["import", writeItems("Loc"), "--user-id", "alice", "--dataset", "notes", ...db.args],
          model.env,
          dir.path
        )
        // mid-way for sure: runs wait at the gate; and a progress line came without a terminal
        await until(() => model.held() > 0 && PROGRESS_LINE.test(importing.stderr()), "the import to be mid-way")
        importing.child.kill("SIGINT")
        await until(() => importing.stderr().includes("SIGINT: stopping"), "the import to hear Ctrl-C")
        model.release()
        const exit = await importing.exited
        const stderr = importing.stderr()
        expect(exit, stderr).toEqual({ code: 130, signal: null })

        const summary = JSON.parse(importing.stdout())
        expect(summary).toMatchObject({ items: ITEMS, interrupted: "SIGINT", failed: 0, cancelled: 0, not_queued: 0 })
        expect(summary.succeeded).toBeGreaterThanOrEqual(OPEN)
        expect(summary.still_queued).toBeGreaterThan(0)
        expect(summary.succeeded + summary.still_queued).toBe(ITEMS)
        expect(stderr.indexOf("SIGINT: stopping")).toBeGreaterThan(stderr.search(PROGRESS_LINE))
        expect(stderr).toContain(`gligabao import stopped by SIGINT: ${summary.succeeded} of ${ITEMS} items done.`)
        expect(stderr).toContain(`${summary.still_queued} still queued: they run at the next start of gligabao`)

        // what the summary says is what the run log holds: the rest is queued, none half-way
        const before = await runsOf(db, "alice")
        expect(before).toHaveLength(ITEMS)
        expect(before.filter((r) => r.status === "succeeded")).toHaveLength(summary.succeeded)
        expect(before.filter((r) => r.status === "queued")).toHaveLength(summary.still_queued)

        const command = printedCancelCommand(stderr)
        expect(command).toEqual(["runs", "cancel", "--user-id", "alice", "--dataset", "notes", "--queued", ...db.args])
        const cancel = await runGligabao(command, {}, dir.path)
        expect(cancel.code, cancel.stderr).toBe(0)
        const done = JSON.parse(cancel.stdout)
        const queuedIds = before.filter((r) => r.status === "queued").map((r) => r.id)
        expect(done).toEqual({ cancelled: queuedIds, started: [] })
        expect(cancel.stderr).toContain(`cancelled ${queuedIds.length} queued runs of alice in notes`)

        const after = await runsOf(db, "alice")
        expect(after.filter((r) => r.status === "cancelled").map((r) => r.id)).toEqual(queuedIds)
        expect(after.filter((r) => r.status === "cancelled").every((r) => r.finished && !r.started)).toBe(true)
        expect(await countOf(db, `SELECT COUNT(*) AS n FROM gb_remember_queue`)).toBe(0)
        expect(await countOf(db, `SELECT COUNT(*) AS n FROM gb_remember_idempotency`)).toBe(summary.succeeded)
        // runs are in item order (one batch, one transaction)
        const index = new Map(after.map((r, i) => [r.id, i]))
        const cancelledItems = queuedIds.map((id) => index.get(id)!)
        await expectNothingOf(db, model, "Loc", cancelledItems)
        const entities = new Set((await db.query(`SELECT name FROM gb_entities`)).map((r) => String(r.name)))
        for (const r of after.filter((r) => r.status === "succeeded")) {
          expect(entities.has(`Loc${index.get(r.id)}`)).toBe(true)
        }

        // the next start on the database runs none of them
        const server = await serve(db, model.env, dir.path)
        try {
          const res = await fetch(`${server.url}/v1/gb/remember`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ user_id: "alice", dataset: "notes", text: "Zed works at Zedorg." })
          })
          expect(res.status).toBe(200)
        } finally {
          await server.stop()
        }
        expect((await runsOf(db, "alice")).filter((r) => r.status === "cancelled").map((r) => r.id)).toEqual(queuedIds)
        await expectNothingOf(db, model, "Loc", cancelledItems)
      } finally {
        await model.close()
        await db.close()
      }
    },
    300_000
  )

  it(
    "SIGTERM stops an import through a server: exit 143; the printed command cancels the queued runs, a started one finishes",
    async () => {
      const db = await openDb(dialect)
      const model = await gatedModel({ open: OPEN })
      const server = await serve(db, model.env, dir.path)
      try {
        const importing = spawnGligabao(
          ["import", writeItems("Rem"), "--user-id", "bob", "--dataset", "inbox", "--url", server.url],
          {},
          dir.path
        )
        await until(() => model.held() > 0 && PROGRESS_LINE.test(importing.stderr()), "the import to be mid-way")
        importing.child.kill("SIGTERM")
        const exit = await importing.exited
        const stderr = importing.stderr()
        expect(exit, stderr).toEqual({ code: 143, signal: null })
        const summary = JSON.parse(importing.stdout())
        expect(summary).toMatchObject({ items: ITEMS, interrupted: "SIGTERM", failed: 0, cancelled: 0, not_queued: 0 })
        expect(summary.still_queued).toBeGreaterThan(0)
        expect(stderr).toContain(
          `${summary.still_queued} still queued on ${server.url}: the server goes on running them.`
        )

        // the gate still holds a run the server started: it is named, not cancelled
        const command = printedCancelCommand(stderr)
        expect(command).toEqual([
          "runs",
          "cancel",
          "--user-id",
          "bob",
          "--dataset",
          "inbox",
          "--queued",
          "--url",
          server.url
        ])
        const cancel = await runGligabao(command, {}, dir.path)
        expect(cancel.code, cancel.stderr).toBe(0)
        const done = JSON.parse(cancel.stdout)
        expect(done.started.length).toBeGreaterThan(0)
        expect(done.cancelled.length).toBeGreaterThan(0)
        expect(cancel.stderr).toMatch(/already started, not cancelled \(a started run runs to its end\): \d+/)
        const runs = await runsOf(db, "bob")
        expect(runs.filter((r) => r.status === "cancelled").map((r) => r.id)).toEqual(done.cancelled)
        expect(runs.filter((r) => r.status === "started").map((r) => r.id)).toEqual(done.started)

        // the started ones finish; the cancelled ones never run
        model.release()
        await until(
          async () => (await runsOf(db, "bob")).every((r) => r.status !== "started" && r.status !== "queued"),
          "the started runs to finish"
        )
        const end = await runsOf(db, "bob")
        expect(end.filter((r) => done.started.includes(r.id)).every((r) => r.status === "succeeded")).toBe(true)
        expect(end.filter((r) => r.status === "succeeded")).toHaveLength(ITEMS - done.cancelled.length)
        const index = new Map(end.map((r, i) => [r.id, i]))
        await expectNothingOf(db, model, "Rem", done.cancelled.map((id: number) => index.get(id)!))
      } finally {
        await server.stop()
        await model.close()
        await db.close()
      }
    },
    300_000
  )
})
