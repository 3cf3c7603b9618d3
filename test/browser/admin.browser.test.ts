/**
 * The admin page in a real browser (Debian's Chromium), against a real `gligabao serve` whose
 * runs were made through the API with a scripted fake Anthropic: three succeeded remembers (one
 * contradicting another, so a fact is closed; one with a failing web search, so it is flagged),
 * one failed remember, and one held in progress to watch the page refresh itself; the Memory
 * view over the first user's dataset, with a fact whose start is unknown written into the file
 * with SQL. Then the same page with `[auth]` tokens. Screenshots go to build/test-artifacts/.
 */
import Database from "better-sqlite3"
import { Schema } from "effect"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  AdminDatabasesResponse,
  AdminDatasetsResponse,
  AdminGraphResponse,
  AdminRunsResponse,
  AdminUsageResponse
} from "../../src/admin/responses.js"
import { TEXT_STAGES } from "../../src/domain/Stages.js"
import { readResolveEdgesPrompt } from "../../src/pipeline/prompts/resolveEdges.js"
import { EntityStory } from "../../src/query/responses.js"
import { launchChromium, type PageWatch, screenshot, watchPage } from "../support/browser.js"
import { type SpawnedServer, startServer, tempDir } from "../support/cli.js"
import {
  anthropicError,
  anthropicMessage,
  type FakeAnthropic,
  type RecordedRequest,
  startFakeAnthropic
} from "../support/fakeAnthropic.js"

const EXTRACT_MARK = "You extract a knowledge graph"
const RESOLVE_MARK = "You compare new facts"
// priced by the built-in table, so the cost chart has bars
const MODEL = "claude-haiku-4-5-20251001"
const WAIT = { timeout: 30_000 }

const fact = (source: [string, string], target: [string, string], relation: string, validAt: string) => ({
  entities: [
    { name: source[0], type: source[1], description: `${source[0]}, a ${source[1]}` },
    { name: target[0], type: target[1], description: `${target[0]}, a ${target[1]}` }
  ],
  edges: [{
    source: source[0],
    target: target[0],
    relation,
    description: `${source[0]} ${relation} ${target[0]}`,
    valid_at: validAt,
    invalid_at: null
  }]
})

/** Gates the extraction of the "Carol" text until released, to hold a run in progress. */
let releaseCarol: () => void = () => {}
const carolGate = new Promise<void>((resolve) => (releaseCarol = resolve))

const answer = async (request: RecordedRequest) => {
  if (request.path !== "/v1/messages") return anthropicError(404, request.path)
  // the web search stage: failing it leaves a succeeded but flagged run
  if (JSON.stringify(request.body.tools ?? []).includes("web_search")) {
    return anthropicError(400, "web search is not enabled for this key")
  }
  const system = JSON.stringify(request.body.system)
  const user = JSON.stringify(request.body.messages)
  const reply = (value: unknown) =>
    anthropicMessage({ text: JSON.stringify(value), model: MODEL, usage: { input_tokens: 1200, output_tokens: 300 } })
  if (system.includes(EXTRACT_MARK)) {
    if (user.includes("makes the model fail")) return anthropicError(400, "prompt is malformed")
    if (user.includes("Carol")) {
      await carolGate
      return reply(fact(["Carol", "person"], ["Lisbon", "place"], "lives in", "2025-06-01T00:00:00Z"))
    }
    if (user.includes("Bob")) {
      return reply(fact(["Bob", "person"], ["Acme", "organization"], "works at", "2025-02-01T00:00:00Z"))
    }
    if (user.includes("Paris")) {
      return reply(fact(["Alice Smith", "person"], ["Paris", "place"], "lives in", "2025-01-15T00:00:00Z"))
    }
    return reply(fact(["Alice Smith", "person"], ["Berlin", "place"], "lives in", "2024-03-01T00:00:00Z"))
  }
  if (system.includes(RESOLVE_MARK)) {
    const data = readResolveEdgesPrompt(request.body.messages[0].content)
    const moved = data.new_facts.find((f: any) => f.target === "Paris")
    const old = data.existing_facts.filter((f: any) => f.target === "Berlin").map((f: any) => f.id)
    return reply({
      duplicates: [],
      contradictions: moved && old.length > 0 ? [{ new: moved.index, existing: old }] : []
    })
  }
  return anthropicError(400, `unexpected system prompt: ${system.slice(0, 80)}`)
}

const remember = async (url: string, body: unknown, token?: string) => {
  const res = await fetch(`${url}/v1/gb/remember`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    body: JSON.stringify(body)
  })
  return { status: res.status, json: await res.json() }
}

/** An admin API answer, read with (and checked against) its schema. */
const adminGet = async <A, I>(url: string, path: string, schema: Schema.Schema<A, I>): Promise<A> => {
  const res = await fetch(`${url}/v1/gb/admin/api/${path}`)
  expect(res.status, path).toBe(200)
  return Schema.decodeUnknownSync(schema)(await res.json())
}

let fake: FakeAnthropic
let browser: Browser
beforeAll(async () => {
  fake = await startFakeAnthropic()
  fake.setHandler(answer)
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  releaseCarol()
  await browser?.close()
  await fake?.close()
})

const newPage = async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  page.setDefaultTimeout(WAIT.timeout)
  return page
}

describe("the admin page", { timeout: 120_000 }, () => {
  let server: SpawnedServer
  let page: Page
  let watch: PageWatch
  let db: string
  const ids = { berlin: 0, paris: 0, flagged: 0, failed: 0 }
  // the server's SQLite file, for a row no model answer can make yet
  const dir = tempDir("gligabao-admin-browser-")
  const dbFile = join(dir.path, "admin.db")

  beforeAll(async () => {
    server = await startServer({ db: dbFile, env: { ANTHROPIC_API_KEY: "test", ANTHROPIC_BASE_URL: fake.url } })
    const seeds: Array<[keyof typeof ids, unknown, number]> = [
      ["berlin", {
        user_id: "u1",
        dataset: "main",
        text: "Alice lives in Berlin.",
        reference_time: "2024-03-01T00:00:00Z"
      }, 200],
      ["paris", { user_id: "u1", dataset: "main", text: "Alice moved to Paris on 2025-01-15." }, 200],
      ["flagged", { user_id: "u2", dataset: "work", text: "Bob works at Acme.", web_search: true }, 200],
      ["failed", { user_id: "u3", dataset: "broken", text: "This text makes the model fail." }, 502]
    ]
    // one after the other: run ids in this order
    for (const [name, body, status] of seeds) {
      const res = await remember(server.url, body)
      expect(res.status, `${name}: ${JSON.stringify(res.json)}`).toBe(status)
    }
    db = (await adminGet(server.url, "databases", AdminDatabasesResponse)).databases[0].name
    const listed = await adminGet(server.url, `remember-runs?db=${db}`, AdminRunsResponse) // newest first: failed, flagged, paris, berlin
    ;[ids.failed, ids.flagged, ids.paris, ids.berlin] = listed.runs.map((r) => r.id)
    expect(listed.runs.find((r) => r.id === ids.flagged)).toMatchObject({ status: "succeeded", flagged: true })

    page = await newPage()
    watch = watchPage(page)
    await page.goto(`${server.url}/v1/gb/admin/`)
    // a page whose script broke would fail every test slowly: fail here, saying why
    await page.locator("#loading").waitFor({ state: "hidden" }).catch((e) => {
      throw new Error(`the page did not load its data: ${JSON.stringify(watch.errors)} (${e})`)
    })
  }, 120_000)
  afterAll(async () => {
    await page?.close()
    await server?.stop()
    dir.remove()
  })

  const rows = () => page.getByTestId("run-row")
  const countOf = async (status: string) =>
    (await page.getByTestId(`count-${status}`).locator(".value").innerText()).trim()

  it("lists the runs newest first with the counts by status", async () => {
    expect(await page.title()).toBe("gligabao admin")
    await page.locator(`[data-testid=run-row][data-run-id="${ids.berlin}"]`).waitFor()
    expect(await rows().evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute("data-run-id")))))
      .toEqual([ids.failed, ids.flagged, ids.paris, ids.berlin])
    expect([await countOf("total"), await countOf("started"), await countOf("succeeded"), await countOf("failed")])
      .toEqual(["4", "0", "3", "1"])
    // the flagged run carries the badge, and only it
    const flagged = page.locator("[data-testid=run-row]:has([data-testid=flag-badge])")
    expect(await flagged.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute("data-run-id"))))).toEqual([
      ids.flagged
    ])
    expect(await flagged.getByTestId("flag-badge").getAttribute("title")).toMatch(/stage failed/)
    await screenshot(page, "admin-runs.png")
  })

  it("filters by a status without changing the counts, and clears the filter", async () => {
    await page.getByTestId("count-failed").click()
    await expect.poll(() => rows().count(), WAIT).toBe(1)
    expect(await rows().getAttribute("data-run-id")).toBe(String(ids.failed))
    expect(await page.getByTestId("count-failed").getAttribute("aria-pressed")).toBe("true")
    expect([await countOf("total"), await countOf("succeeded"), await countOf("failed")]).toEqual(["4", "3", "1"])

    await page.getByTestId("clear-filter").click()
    await expect.poll(() => rows().count(), WAIT).toBe(4)
    // clicking a status twice removes its filter too
    await page.getByTestId("count-succeeded").click()
    await expect.poll(() => rows().count(), WAIT).toBe(3)
    await page.getByTestId("count-succeeded").click()
    await expect.poll(() => rows().count(), WAIT).toBe(4)
  })

  it("opens a run: its parameters and its stages in pipeline order; a flagged run says so", async () => {
    await page.locator(`[data-testid=run-row][data-run-id="${ids.flagged}"]`).click()
    const detail = page.getByTestId("run-detail")
    await detail.getByTestId("stages-table").waitFor()
    expect(await detail.getAttribute("data-run-id")).toBe(String(ids.flagged))
    const stages = await detail.getByTestId("stage-row").evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute("data-stage"), tr.getAttribute("data-status")])
    )
    expect(stages.map(([name]) => name)).toEqual([...TEXT_STAGES])
    expect(Object.fromEntries(stages)).toMatchObject({
      extract_graph: "succeeded",
      store: "succeeded",
      web_search: "failed"
    })
    expect(await detail.locator("[data-testid=stage-extra][data-stage=web_search]").innerText()).toMatch(
      /web search is not enabled/
    )
    expect(await detail.getByTestId("flag-badge").isVisible()).toBe(true)
    // the parameters as the run log keeps them, pretty-printed
    const params = await detail.getByTestId("run-params").innerText()
    expect(JSON.parse(params)).toMatchObject({ web_search: true, text_length: "Bob works at Acme.".length })
    expect(params).toContain("\n  ")
    // the model calls of the run: one row per inference id of the stages table, with its cost
    const stageIds = (await detail.getByTestId("stage-row").evaluateAll((trs) =>
      trs.map((tr) => tr.children[4]?.textContent ?? "")
    )).flatMap((cell) => cell.match(/\d+/g) ?? [])
    await expect.poll(() => detail.getByTestId("call-row").count(), WAIT).toBe(stageIds.length)
    const callIds = await detail.getByTestId("call-row").evaluateAll((trs) =>
      trs.map((tr) => tr.getAttribute("data-inference-id"))
    )
    expect([...callIds].sort()).toEqual([...stageIds].sort())
    await screenshot(page, "admin-run-detail.png")

    await page.locator(`[data-testid=run-row][data-run-id="${ids.failed}"]`).click()
    await expect.poll(() => detail.getAttribute("data-run-id"), WAIT).toBe(String(ids.failed))
    expect(await detail.locator("[data-testid=stage-row][data-stage=extract_graph]").getAttribute("data-status")).toBe(
      "failed"
    )
    expect(await detail.locator("[data-testid=stage-extra][data-stage=extract_graph]").innerText()).toMatch(
      /prompt is malformed/
    )
    expect(await detail.getByTestId("flag-badge").count()).toBe(0)
  })

  it("refreshes itself while a run is in progress", async () => {
    const pending = remember(server.url, { user_id: "u4", dataset: "slow", text: "Carol lives in Lisbon." })
    // if a wait below fails, the server stops with this call open: not an unhandled rejection
    pending.catch(() => {})
    // the page was loaded before the run: a click on "total" reloads the list once
    await expect.poll(async () => {
      await page.getByTestId("count-total").click()
      return page.locator("[data-testid=run-row][data-status=started]").count()
    }, WAIT).toBe(1)
    const started = page.locator("[data-testid=run-row][data-status=started]")
    const id = await started.getAttribute("data-run-id")
    await started.click()
    await expect.poll(() => page.getByTestId("run-detail").getAttribute("data-run-id"), WAIT).toBe(id)
    expect(await page.getByTestId("live").isVisible()).toBe(true)
    expect(await countOf("started")).toBe("1")

    releaseCarol()
    expect((await pending).status).toBe(200)
    // no click from here: the page polls
    await page.locator(`[data-testid=run-row][data-run-id="${id}"][data-status=succeeded]`).waitFor()
    await expect.poll(() => page.getByTestId("run-detail").getByTestId("status-badge").first().innerText(), WAIT).toBe(
      "succeeded"
    )
    await expect.poll(() => countOf("succeeded"), WAIT).toBe("4")
    await page.getByTestId("live").waitFor({ state: "hidden" })
  })

  it("shows model usage: a cost chart stacked by stage, and the tables by stage and by model", async () => {
    await page.getByTestId("tab-inferences").click()
    await page.locator("[data-testid=chart-svg] rect.bar").first().waitFor()
    const usage = await adminGet(server.url, `inferences?db=${db}`, AdminUsageResponse)
    const stages = await page.getByTestId("by-stage-row").evaluateAll((trs) =>
      trs.map((tr) => tr.getAttribute("data-stage"))
    )
    expect(stages).toEqual(usage.by_stage.map((s) => s.stage))
    expect(stages).toEqual(expect.arrayContaining(["extract_graph", "resolve_edges", "web_search"]))
    expect(await page.getByTestId("total-calls").locator(".value").innerText()).toBe(String(usage.totals.calls))
    expect(await page.getByTestId("by-model-row").count()).toBe(usage.by_model.length)
    const legend = await page.getByTestId("chart-legend").innerText()
    for (const stage of ["extract_graph", "web_search"]) expect(legend).toContain(stage)
    // the token view draws bars as well
    await page.getByTestId("metric-tokens").click()
    await page.locator("[data-testid=chart-svg] rect.bar").first().waitFor()
    await page.getByTestId("metric-cost").click()
    await screenshot(page, "admin-inferences.png")
  })

  it("draws a dataset's graph; a closed fact shows its times and its source", async () => {
    await page.getByTestId("tab-graph").click()
    const datasets = await adminGet(server.url, `datasets?db=${db}`, AdminDatasetsResponse)
    const main = datasets.datasets.find((d) => d.user_id === "u1" && d.name === "main")!
    await page.locator(`[data-testid=dataset-row][data-dataset-id="${main.id}"]`).click()
    const canvas = page.locator("[data-testid=graph-canvas][data-ready=true]")
    await canvas.waitFor()
    const graph = await adminGet(server.url, `graph?db=${db}&dataset_id=${main.id}`, AdminGraphResponse)
    expect(graph.entities.map((e) => e.name).sort()).toEqual(["Alice Smith", "Berlin", "Paris"])
    expect(await canvas.getAttribute("data-node-count")).toBe(String(graph.entities.length))
    expect(await canvas.getAttribute("data-edge-count")).toBe(String(graph.edges.length))
    expect(await page.evaluate(() => (globalThis as any).gligabaoAdmin.cy.nodes().length)).toBe(graph.entities.length)

    const closed = graph.edges.find((e) => e.invalid_at !== null || e.expired_at !== null)!
    expect(closed, JSON.stringify(graph.edges)).toBeDefined()
    expect(
      await page.evaluate((id) => (globalThis as any).gligabaoAdmin.cy.$id(`e${id}`).hasClass("closed"), closed.id)
    ).toBe(true)
    // a real click on the middle of the drawn edge
    const point = await page.evaluate((id) => {
      const cy = (globalThis as any).gligabaoAdmin.cy
      const mid = cy.$id(`e${id}`).renderedMidpoint()
      const box = cy.container().getBoundingClientRect()
      return { x: box.left + mid.x, y: box.top + mid.y }
    }, closed.id)
    await page.mouse.click(point.x, point.y)
    const info = page.getByTestId("graph-info")
    await info.getByTestId("info-valid_at").waitFor()
    expect(await info.getByTestId("info-valid_at").innerText()).toBe(closed.valid_at)
    expect(await info.getByTestId("info-invalid_at").innerText()).toBe(closed.invalid_at ?? "–")
    expect(await info.getByTestId("info-created_at").innerText()).toBe(closed.created_at)
    expect(await info.getByTestId("info-artifact").first().innerText()).toContain("Alice lives in Berlin.")

    // an entity
    const alice = graph.entities.find((e) => e.name === "Alice Smith")!
    const at = await page.evaluate((id) => {
      const cy = (globalThis as any).gligabaoAdmin.cy
      const pos = cy.$id(`n${id}`).renderedPosition()
      const box = cy.container().getBoundingClientRect()
      return { x: box.left + pos.x, y: box.top + pos.y }
    }, alice.id)
    await page.mouse.click(at.x, at.y)
    await expect.poll(() => info.getByTestId("info-title").innerText(), WAIT).toBe("Alice Smith")
    expect(await info.getByTestId("info-type").innerText()).toBe("person")
    await screenshot(page, "admin-graph.png")
  })

  it("the Memory view: searches a user's memory, draws an entity's facts over time, opens a fact's texts", async () => {
    await page.getByTestId("tab-memory").click()
    await page.getByTestId("memory-user").fill("u1")
    await page.getByTestId("memory-dataset").fill("main")
    await page.getByTestId("memory-query").fill("Alice")
    await page.getByTestId("memory-submit").click()
    const aliceRow = page.locator("[data-testid=memory-entity-row]", { hasText: "Alice Smith" })
    await aliceRow.waitFor()
    // what holds now: Paris; Berlin had ended
    const found = await page.getByTestId("memory-fact-row").allInnerTexts()
    expect(found.join("\n")).toContain("Paris")
    expect(found.join("\n")).not.toContain("Berlin")

    await aliceRow.click()
    const entity = page.getByTestId("memory-entity")
    await expect.poll(() => entity.getByTestId("memory-entity-title").innerText(), WAIT).toBe("Alice Smith")
    const story = await adminGet(
      server.url,
      `memory/entity?db=${db}&user_id=u1&dataset=main&id=${await aliceRow.getAttribute("data-entity-id")}`,
      EntityStory
    )
    const bars = entity.getByTestId("fact-bar")
    await expect.poll(() => bars.count(), WAIT).toBe(story.facts.length)
    expect(story.facts.map((f) => f.target)).toEqual(["Berlin", "Paris"])
    const [berlin, paris] = story.facts
    // one bar closed (a class and a legend say so), the other holding to now
    const closedBar = entity.locator("[data-testid=fact-bar][data-closed=true]")
    expect(await closedBar.count()).toBe(1)
    expect(await closedBar.getAttribute("data-fact-id")).toBe(String(berlin!.id))
    expect(await closedBar.evaluate((el) => el.classList.contains("closed"))).toBe(true)
    const liveBar = entity.locator(`[data-testid=fact-bar][data-fact-id="${paris!.id}"]`)
    expect(await liveBar.evaluate((el) => el.classList.contains("live"))).toBe(true)
    expect(await entity.getByTestId("timeline-legend").innerText()).toMatch(/closed/)
    // on the time axis, Berlin ends where Paris begins
    const [closedBox, liveBox] = [await closedBar.boundingBox(), await liveBar.boundingBox()]
    expect(Math.abs(closedBox!.x + closedBox!.width - liveBox!.x)).toBeLessThan(2)

    await closedBar.click()
    const detail = page.getByTestId("memory-fact-detail")
    await expect.poll(() => detail.getAttribute("data-fact-id"), WAIT).toBe(String(berlin!.id))
    const sources = detail.getByTestId("memory-source")
    expect(await sources.count()).toBe(1)
    expect(await sources.first().getAttribute("data-role")).toBe("created")
    expect(await detail.getByTestId("memory-source-text").first().innerText()).toBe("Alice lives in Berlin.")
    const closure = detail.getByTestId("memory-closure")
    expect(await closure.count()).toBe(1)
    expect(await closure.getAttribute("data-kind")).toBe("close")
    expect(await closure.innerText()).toContain(`fact #${paris!.id}: ${paris!.description}`)
    expect(await detail.getByTestId("fact-invalid_at").innerText()).toBe(berlin!.invalid_at)
    await screenshot(page, "admin-memory.png")

    // the closing fact, from its link: the second text
    await closure.getByRole("button").click()
    await expect.poll(() => detail.getAttribute("data-fact-id"), WAIT).toBe(String(paris!.id))
    expect(await detail.getByTestId("memory-source-text").first().innerText()).toBe(
      "Alice moved to Paris on 2025-01-15."
    )
    expect(await detail.getByTestId("memory-closure").count()).toBe(0)
  })

  it("the Memory view draws a fact whose start is unknown as an open bar from the axis' left edge", async () => {
    // what "Alice moved from Hamburg to Berlin" leaves: she lived in Hamburg until Berlin, since when unknown
    const conn = new Database(dbFile)
    let hamburg: number
    try {
      const alice = conn.prepare(`SELECT n.id, n.dataset_id FROM gb_entities n JOIN gb_datasets d ON d.id = n.dataset_id
        WHERE d.user_id = 'u1' AND d.name = 'main' AND n.name = 'Alice Smith'`).get() as {
        id: number
        dataset_id: number
      }
      const city = conn.prepare(
        `INSERT INTO gb_entities (dataset_id, name, name_key, type, description, created_at, updated_at)
        VALUES (?, 'Hamburg', 'hamburg', 'place', '', ?, ?)`
      ).run(alice.dataset_id, "2025-02-01T00:00:00.000Z", "2025-02-01T00:00:00.000Z")
      hamburg = Number(
        conn.prepare(`INSERT INTO gb_edges (dataset_id, source_id, target_id, relation, description, valid_at,
          invalid_at, created_at, expired_at)
        VALUES (?, ?, ?, 'lives in', 'Alice Smith lives in Hamburg', NULL, '2024-03-01T00:00:00.000Z', ?, NULL)`)
          .run(alice.dataset_id, alice.id, city.lastInsertRowid, "2025-02-01T00:00:00.000Z").lastInsertRowid
      )
    } finally {
      conn.close()
    }

    // the story again: unknown start first
    await page.locator("[data-testid=memory-entity-row]", { hasText: "Alice Smith" }).click()
    const entity = page.getByTestId("memory-entity")
    const bars = entity.getByTestId("fact-bar")
    await expect.poll(() => bars.count(), WAIT).toBe(3)
    expect(await bars.evaluateAll((els) => els.map((el) => el.getAttribute("data-fact-id")))).toEqual([
      String(hamburg),
      expect.any(String),
      expect.any(String)
    ])
    // placed as numbers, never NaN; the axis is not stretched back to 1970
    const geometry = await bars.evaluateAll((els) =>
      els.map((el) => `${(el as any).style.left} ${(el as any).style.width}`)
    )
    for (const g of geometry) expect(g).toMatch(/^-?[\d.]+% [\d.]+%$/)
    expect(await entity.getByTestId("timeline-axis").innerText()).not.toMatch(/1970|NaN/)

    const open = entity.locator("[data-testid=fact-bar][data-open-start=true]")
    expect(await open.count()).toBe(1)
    expect(await open.getAttribute("data-fact-id")).toBe(String(hamburg))
    expect(await open.getAttribute("aria-label")).toContain("unknown start to 2024-03-01T00:00:00.000Z")
    // from the track's left edge to where Berlin begins
    const track = await open.locator("xpath=..").boundingBox()
    const box = await open.boundingBox()
    const berlinBar = entity.locator(`[data-testid=fact-bar][data-fact-id]:not([data-open-start=true])`).first()
    const berlinBox = await berlinBar.boundingBox()
    expect(Math.abs(box!.x - track!.x)).toBeLessThan(2)
    expect(Math.abs(box!.x + box!.width - berlinBox!.x)).toBeLessThan(2)
    expect(await entity.getByTestId("timeline-legend").innerText()).toMatch(/start unknown/)

    await open.click()
    const detail = page.getByTestId("memory-fact-detail")
    await expect.poll(() => detail.getAttribute("data-fact-id"), WAIT).toBe(String(hamburg))
    expect(await detail.getByTestId("fact-valid_at").innerText()).toBe("unknown start")
    expect(await detail.getByTestId("fact-invalid_at").innerText()).toBe("2024-03-01T00:00:00.000Z")
    await screenshot(page, "admin-memory-unknown-start.png")
  })

  it("loaded with no console error and requested nothing but the server", () => {
    expect(watch.errors).toEqual([])
    expect(watch.requests.length).toBeGreaterThan(0)
    expect(watch.requests.filter((url) => !url.startsWith(`${server.url}/`))).toEqual([])
  })
})

describe("the admin page with [auth] tokens", { timeout: 120_000 }, () => {
  let server: SpawnedServer
  let page: Page
  beforeAll(async () => {
    server = await startServer({
      env: {
        ANTHROPIC_API_KEY: "test",
        ANTHROPIC_BASE_URL: fake.url,
        GLIGABAO_AUTH_TOKENS: JSON.stringify([{ token: "admin-secret-0123456789abcdef", admin: true }, {
          token: "u1-secret-0123456789abcdefghi",
          user_id: "u1"
        }])
      }
    })
    // one run for the list (a server without a model key refuses remembers before any run, issue 40)
    const res = await remember(
      server.url,
      { user_id: "u1", text: "Alice lives in Berlin." },
      "u1-secret-0123456789abcdefghi"
    )
    expect(res.status, JSON.stringify(res.json)).toBe(200)
    page = await newPage()
  }, 120_000)
  afterAll(async () => {
    await page?.close()
    await server?.stop()
  })

  it("asks for a token, refuses a user's token, shows the runs with the admin token, signs out", async () => {
    const apiAuth: Array<string | undefined> = []
    page.on("request", (request) => {
      if (request.url().includes("/admin/api/")) apiAuth.push(request.headers()["authorization"])
    })
    await page.goto(`${server.url}/v1/gb/admin/`)
    await page.getByTestId("auth-token").waitFor()
    expect(await page.getByTestId("run-row").count()).toBe(0)

    await page.getByTestId("auth-token").fill("u1-secret-0123456789abcdefghi")
    await page.getByTestId("auth-submit").click()
    await expect.poll(() => page.getByTestId("auth-message").innerText(), WAIT).toBe(
      "This token is not an admin token."
    )
    expect(await page.getByTestId("run-row").count()).toBe(0)

    await page.getByTestId("auth-token").fill("admin-secret-0123456789abcdef")
    await page.getByTestId("auth-submit").click()
    await page.getByTestId("run-row").first().waitFor()
    expect(await page.getByTestId("run-row").count()).toBe(1)
    expect(await page.getByTestId("auth").isVisible()).toBe(false)
    expect(apiAuth.at(-1)).toBe("Bearer admin-secret-0123456789abcdef")

    // the token outlives a reload of the tab
    await page.reload()
    await page.getByTestId("run-row").first().waitFor()

    await page.getByTestId("sign-out").click()
    await page.getByTestId("auth-token").waitFor()
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.length)).toBe(0)
    expect(await page.getByTestId("view-runs").isVisible()).toBe(false)
  })
})
