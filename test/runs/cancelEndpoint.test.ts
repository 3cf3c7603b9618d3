/**
 * `POST /v1/gb/runs/{id}/cancel` and `gligabao runs cancel --run` (issue 41, item 5) against a
 * real `gligabao serve` on both dialects, with the fake model holding the first run at the gate
 * (test/runs/world.ts) and `remember.lookahead = 1`, so the runs after it stay queued:
 *
 * - a queued run with a waiter (`wait: true` remember) and an event stream: 200 with the run
 *   `cancelled`; the waiter gets a 409 and the stream ends with a `cancelled` event; a second
 *   cancel answers the same;
 * - the started run: 409 saying it runs to its end (and it does); once finished: 409 naming
 *   `succeeded`; another user's run and a missing one: 404; bad input: 400 naming the field;
 * - a cancelled run's Idempotency-Key is released: the same key again queues a new run;
 * - `gligabao runs cancel --run` from another process: the server's waiter is answered too;
 * - nothing of a cancelled run is stored or extracted, and the admin counts show them.
 */
import { afterAll, expect, it } from "vitest"
import { tempDir } from "../support/cli.js"
import { forEachDialect } from "../support/databases.js"
import { call, gatedModel, openDb, runGligabao, runsOf, serve, until } from "./world.js"

const dir = tempDir("gligabao-cancel-endpoint-")
afterAll(() => dir.remove())

forEachDialect((dialect) => {
  it("cancels queued runs only, answers their waiters, releases their keys; a started run finishes", async () => {
    const db = await openDb(dialect)
    const model = await gatedModel({ hold: /Blocker/ })
    const server = await serve(db, { ...model.env, GLIGABAO_REMEMBER_LOOKAHEAD: "1" }, dir.path)
    const api = `${server.url}/v1/gb`
    const remember = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      fetch(`${api}/remember`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ user_id: "alice", dataset: "d", ...body }),
        signal: AbortSignal.timeout(120_000)
      }).then(async (res) => ({ status: res.status, json: await res.json() as any }))
    const cancel = (id: number | string, body: unknown = { user_id: "alice" }) =>
      call("POST", `${api}/runs/${id}/cancel`, body)
    const queuedIds = async () => (await runsOf(db, "alice")).filter((r) => r.status === "queued").map((r) => r.id)
    try {
      // A: taken, and held at the gate
      const a = await remember({ text: "Blocker works at Acme.", wait: false })
      expect(a.status).toBe(202)
      const aId = a.json.remember_run_id as number
      await until(() => model.held() === 1, "run A to be held")

      // B: queued behind A, with a waiter and an event stream
      const waiterB = remember({ text: "Waiter works at Wco." })
      await until(async () => (await queuedIds()).length === 1, "run B to be queued")
      const [bId] = await queuedIds()
      const streamB = fetch(`${api}/runs/${bId}/events`).then((res) => res.text())
      // C: queued, with an Idempotency-Key
      const c = await remember({ text: "Keyed works at Kco.", wait: false }, { "idempotency-key": "k1" })
      expect(c.status).toBe(202)
      const cId = c.json.remember_run_id as number
      // D: queued, with a waiter, cancelled from another process below
      const waiterD = remember({ text: "Other works at Oco." })
      await until(async () => (await queuedIds()).length === 3, "run D to be queued")
      const dId = (await queuedIds())[2]!

      const b = await cancel(bId!)
      expect(b.status, b.text).toBe(200)
      expect(b.json).toMatchObject({ id: bId, status: "cancelled", started_at: null, user_id: "alice", dataset: "d" })
      expect(typeof b.json.finished_at).toBe("string")
      const answered = await waiterB
      expect(answered.status).toBe(409)
      expect(answered.json).toEqual({
        error: `remember run ${bId} was cancelled before it started: nothing of it was stored`
      })
      const events = [...(await streamB).matchAll(/^event: (\w+)$/gm)].map((m) => m[1])
      expect(events).toEqual(["queued", "cancelled"])
      // a second cancel holds; the run says so; its stream has nothing more to say
      expect(await cancel(bId!)).toMatchObject({ status: 200, json: { id: bId, status: "cancelled" } })
      expect((await call("GET", `${api}/runs/${bId}`)).json.status).toBe("cancelled")
      expect((await call("GET", `${api}/runs/${bId}/events`)).status).toBe(204)

      // the started run is not interrupted
      const started = await cancel(aId)
      expect(started.status).toBe(409)
      expect(started.json).toEqual({
        error: `remember run ${aId} is running (started): a started run is not cancelled, it runs to its end`
      })
      // another user's run is as absent as a missing one; bad input names the field
      expect(await cancel(cId, { user_id: "bob" })).toMatchObject({
        status: 404,
        json: { error: `no remember run with id ${cId}` }
      })
      expect((await cancel(999_999)).status).toBe(404)
      expect(await cancel(cId, {})).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^user_id /) } })
      expect(await cancel(cId, { user_id: "alice", why: "x" })).toMatchObject({ status: 400 })
      expect((await cancel("abc")).status).toBe(400)
      expect((await runsOf(db, "alice")).find((r) => r.id === cId)!.status).toBe("queued")

      // the key of a cancelled run is released: the same request with it is a new run
      expect(await cancel(cId)).toMatchObject({ status: 200, json: { status: "cancelled" } })
      const again = await remember({ text: "Keyed works at Kco.", wait: false }, { "idempotency-key": "k1" })
      expect(again.status).toBe(202)
      expect(again.json.status).toBe("queued")
      expect(again.json.remember_run_id).not.toBe(cId)

      // from another process: the command cancels it in the database, the server answers D's waiter
      const cli = await runGligabao(
        ["runs", "cancel", "--user-id", "alice", "--run", String(dId), ...db.args],
        {},
        dir.path
      )
      expect(cli.code, cli.stderr).toBe(0)
      expect(JSON.parse(cli.stdout)).toEqual({ cancelled: [dId], started: [] })
      expect((await waiterD).status).toBe(409)
      const running = await runGligabao(
        ["runs", "cancel", "--user-id", "alice", "--run", String(aId), ...db.args],
        {},
        dir.path
      )
      expect(running.code).toBe(1)
      expect(running.stderr).toContain(`remember run ${aId} is running (started)`)
      const neither = await runGligabao(["runs", "cancel", "--user-id", "alice", ...db.args], {}, dir.path)
      expect(neither.code).toBe(1)
      expect(neither.stderr).toContain("give --run ID (one run) or --queued")

      // A finishes, and the new keyed run after it; a finished run cannot be cancelled
      model.release()
      await until(
        async () => (await runsOf(db, "alice")).every((r) => ["succeeded", "cancelled"].includes(r.status)),
        "the runs to end"
      )
      const finished = await cancel(aId)
      expect(finished).toMatchObject({
        status: 409,
        json: { error: `remember run ${aId} has already succeeded: only a queued run can be cancelled` }
      })

      const runs = await runsOf(db, "alice")
      expect(runs.map((r) => r.status)).toEqual(["succeeded", "cancelled", "cancelled", "cancelled", "succeeded"])
      const listed = await call("GET", `${api}/runs?user_id=alice&status=cancelled`)
      expect(listed.json.runs.map((r: any) => r.id)).toEqual([dId, cId, bId])
      const admin = await call("GET", `${api}/admin/api/remember-runs`)
      expect(admin.json.counts).toMatchObject({ total: 5, succeeded: 2, cancelled: 3, queued: 0, started: 0 })
      // nothing of B or D was extracted or stored
      const texts = (await db.query(`SELECT text FROM gb_artifacts`)).map((r) => String(r.text))
      const names = (await db.query(`SELECT name FROM gb_entities`)).map((r) => String(r.name))
      expect(texts).toContain("Keyed works at Kco.")
      expect(names).toContain("Blocker")
      for (const name of ["Waiter", "Other"]) {
        expect(names).not.toContain(name)
        expect(texts.some((t) => t.includes(name))).toBe(false)
        expect(model.extracted().some((m) => m.includes(`${name} works at`))).toBe(false)
      }
    } finally {
      await server.stop()
      await model.close()
      await db.close()
    }
  }, 300_000)
})
