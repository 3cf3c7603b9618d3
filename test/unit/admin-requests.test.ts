/**
 * The admin API's parameter validation (src/admin/requests.ts), database naming
 * (src/admin/AdminDatabases.ts) and the flag of a succeeded run with a failed stage.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { databaseName, duplicateName } from "../../src/admin/AdminDatabases.js"
import { ALL_STAGES, isFlagged } from "../../src/admin/programs.js"
import {
  type Params,
  validateAdminGraphRequest,
  validateDatasetsRequest,
  validateRunsRequest,
  validateUsageRequest
} from "../../src/admin/requests.js"
import type { RunStageRow, RunWithStages } from "../../src/domain/Rows.js"
import { IMAGE_STAGES, TEXT_STAGES } from "../../src/domain/Stages.js"

const right = <A>(result: Either.Either<A, { message: string }>): A => {
  if (Either.isLeft(result)) throw new Error(`expected a valid request, got: ${result.left.message}`)
  return result.right
}

const left = <A>(result: Either.Either<A, { message: string }>): string => {
  if (Either.isRight(result)) throw new Error(`expected a 400, got ${JSON.stringify(result.right)}`)
  return result.left.message
}

describe("validateRunsRequest", () => {
  it("db only: the defaults", () => {
    expect(right(validateRunsRequest({ db: "main" }))).toEqual({
      db: "main",
      status: undefined,
      dataset: undefined,
      user_id: undefined,
      limit: 100,
      offset: 0
    })
  })

  it("db is optional: absent is the server's own database", () => {
    expect(right(validateRunsRequest({})).db).toBeUndefined()
    expect(right(validateRunsRequest({ db: "d" })).db).toBe("d")
  })

  it("every status, the filters, a page", () => {
    for (const status of ["started", "succeeded", "failed"]) {
      expect(right(validateRunsRequest({ db: "d", status })).status).toBe(status)
    }
    expect(right(validateRunsRequest({ db: "d", dataset: "work", user_id: "u1", limit: "500", offset: "40" })))
      .toMatchObject({
        dataset: "work",
        user_id: "u1",
        limit: 500,
        offset: 40
      })
    // an empty parameter is a value, judged as the document judges it (the page leaves blanks out)
    expect(left(validateRunsRequest({ db: "d", status: "" }))).toMatch(/^status /)
    expect(left(validateRunsRequest({ db: "d", limit: "" }))).toMatch(/^limit must be an integer/)
    expect(right(validateRunsRequest({ db: "d" }))).toMatchObject({ limit: 100, offset: 0 })
  })

  it("a status that is not one of the three", () => {
    for (const status of ["done", "SUCCEEDED", "not_started"]) {
      expect(left(validateRunsRequest({ db: "d", status }))).toMatch(
        /status must be one of queued, started, succeeded, failed/
      )
    }
  })

  it("limit from 1 to 500, offset from 0, integers only", () => {
    expect(right(validateRunsRequest({ db: "d", limit: "1" })).limit).toBe(1)
    for (const limit of ["0", "501", "-1", "2.5", "ten", "1e2"]) {
      expect(left(validateRunsRequest({ db: "d", limit })), limit).toMatch(/limit must be an integer from 1 to 500/)
    }
    for (const offset of ["-1", "0.5", "x"]) {
      expect(left(validateRunsRequest({ db: "d", offset })), offset).toMatch(/offset must be an integer from 0/)
    }
  })
})

describe("validateUsageRequest", () => {
  const NOW = Date.parse("2026-03-10T12:34:56.789Z")
  const HOUR = 3_600_000
  const DAY = 24 * HOUR

  it("defaults: the 7 days before now, by day", () => {
    expect(right(validateUsageRequest({ db: "d" }, NOW))).toEqual({
      db: "d",
      from: new Date(NOW - 7 * DAY).toISOString(),
      to: new Date(NOW).toISOString(),
      bucket: "day"
    })
  })

  it("the default bucket: hour up to 2 days, day beyond", () => {
    const to = "2026-03-10T00:00:00Z"
    const from = (ms: number) => new Date(Date.parse(to) - ms).toISOString()
    expect(right(validateUsageRequest({ db: "d", from: from(HOUR), to }, NOW)).bucket).toBe("hour")
    expect(right(validateUsageRequest({ db: "d", from: from(2 * DAY), to }, NOW)).bucket).toBe("hour")
    expect(right(validateUsageRequest({ db: "d", from: from(2 * DAY + 1), to }, NOW)).bucket).toBe("day")
  })

  it("only from, or only to: the other end defaults", () => {
    expect(right(validateUsageRequest({ db: "d", from: "2026-03-10T00:00:00Z" }, NOW))).toMatchObject({
      from: "2026-03-10T00:00:00.000Z",
      to: new Date(NOW).toISOString(),
      bucket: "hour"
    })
    expect(right(validateUsageRequest({ db: "d", to: "2026-01-08T00:00:00+01:00" }, NOW))).toMatchObject({
      from: "2025-12-31T23:00:00.000Z",
      to: "2026-01-07T23:00:00.000Z",
      bucket: "day"
    })
  })

  it("an explicit bucket", () => {
    const period = { db: "d", from: "2026-03-01T00:00:00Z", to: "2026-03-02T00:00:00Z" }
    expect(right(validateUsageRequest({ ...period, bucket: "day" }, NOW)).bucket).toBe("day")
    expect(right(validateUsageRequest({ ...period, bucket: "hour" }, NOW)).bucket).toBe("hour")
    expect(left(validateUsageRequest({ ...period, bucket: "week" }, NOW))).toMatch(/bucket must be hour or day/)
  })

  it("from must be before to", () => {
    expect(left(validateUsageRequest({ db: "d", from: "2026-03-02T00:00:00Z", to: "2026-03-02T00:00:00Z" }, NOW)))
      .toMatch(/from must be before to/)
    expect(left(validateUsageRequest({ db: "d", from: "2026-03-03T00:00:00Z", to: "2026-03-02T00:00:00Z" }, NOW)))
      .toMatch(/from must be before to/)
    // from in the future with the default to (now)
    expect(left(validateUsageRequest({ db: "d", from: "2027-01-01T00:00:00Z" }, NOW))).toMatch(/from must be before to/)
  })

  it("times must be RFC 3339, naming the parameter", () => {
    for (const bad of ["yesterday", "2026-13-01T00:00:00Z", "2026-03-01T00:00:00", "1741564800"]) {
      expect(left(validateUsageRequest({ db: "d", from: bad }, NOW)), bad).toMatch(/^from must be an RFC 3339 time/)
      expect(left(validateUsageRequest({ db: "d", to: bad }, NOW)), bad).toMatch(/^to must be an RFC 3339 time/)
    }
  })

  it("at most 1000 buckets: more is a 400 naming the period", () => {
    const from = "2026-01-01T00:00:00Z"
    const at = (ms: number) => new Date(Date.parse(from) + ms).toISOString()
    expect(right(validateUsageRequest({ db: "d", from, to: at(1000 * HOUR), bucket: "hour" }, NOW)).bucket).toBe("hour")
    expect(left(validateUsageRequest({ db: "d", from, to: at(1000 * HOUR + 1), bucket: "hour" }, NOW))).toMatch(
      /from\.\.to spans more than 1000 hours/
    )
    expect(right(validateUsageRequest({ db: "d", from, to: at(1000 * DAY) }, NOW)).bucket).toBe("day")
    expect(left(validateUsageRequest({ db: "d", from, to: at(1000 * DAY + 1) }, NOW))).toMatch(
      /from\.\.to spans more than 1000 days/
    )
  })

  it("db is optional", () => {
    expect(right(validateUsageRequest({}, NOW)).db).toBeUndefined()
  })
})

describe("validateDatasetsRequest", () => {
  it("defaults, a page, bounds", () => {
    expect(right(validateDatasetsRequest({ db: "d" }))).toEqual({ db: "d", limit: 100, offset: 0 })
    expect(right(validateDatasetsRequest({ db: "d", limit: "500", offset: "3" }))).toEqual({
      db: "d",
      limit: 500,
      offset: 3
    })
    expect(left(validateDatasetsRequest({ db: "d", limit: "501" }))).toMatch(/limit must be an integer from 1 to 500/)
    expect(left(validateDatasetsRequest({ db: "d", limit: "0" }))).toMatch(/limit/)
    expect(left(validateDatasetsRequest({ db: "d", offset: "-5" }))).toMatch(/offset/)
    expect(right(validateDatasetsRequest({}))).toEqual({ limit: 100, offset: 0 })
  })
})

describe("validateAdminGraphRequest", () => {
  it("dataset_id is required and a positive integer", () => {
    expect(right(validateAdminGraphRequest({ db: "d", dataset_id: "7" }))).toEqual({
      db: "d",
      dataset_id: 7,
      limit: 300
    })
    expect(left(validateAdminGraphRequest({ db: "d" }))).toMatch(/dataset_id is required/)
    expect(left(validateAdminGraphRequest({ db: "d", dataset_id: "" }))).toMatch(/dataset_id must be an integer/)
    for (const id of ["0", "-3", "1.5", "abc"]) {
      expect(left(validateAdminGraphRequest({ db: "d", dataset_id: id })), id).toMatch(
        /dataset_id must be an integer from 1/
      )
    }
  })

  it("limit from 1 to 2000, default 300", () => {
    expect(right(validateAdminGraphRequest({ db: "d", dataset_id: "1", limit: "2000" })).limit).toBe(2000)
    expect(right(validateAdminGraphRequest({ db: "d", dataset_id: "1", limit: "1" })).limit).toBe(1)
    expect(right(validateAdminGraphRequest({ db: "d", dataset_id: "1" })).limit).toBe(300)
    for (const limit of ["0", "2001", "x"]) {
      expect(left(validateAdminGraphRequest({ db: "d", dataset_id: "1", limit })), limit).toMatch(
        /limit must be an integer from 1 to 2000/
      )
    }
  })

  it("db is optional", () => {
    const params: Params = { dataset_id: "1" }
    expect(right(validateAdminGraphRequest(params)).db).toBeUndefined()
  })
})

describe("databaseName and duplicateName", () => {
  it("a SQLite file's name without its extension", () => {
    expect(databaseName({ path: "build/gligabao.db" })).toBe("gligabao")
    expect(databaseName({ path: "/var/lib/x/prod.sqlite" })).toBe("prod")
    expect(databaseName({ path: "old.SQLITE3" })).toBe("old")
    expect(databaseName({ path: "C:\\data\\win.db" })).toBe("win")
    expect(databaseName({ path: "notes.txt" })).toBe("notes.txt")
    expect(databaseName({ path: "plain" })).toBe("plain")
    expect(databaseName({ path: "archive.db.bak" })).toBe("archive.db.bak")
    expect(databaseName({ path: ":memory:" })).toBe("memory")
    // a file called just ".db" keeps its name rather than none
    expect(databaseName({ path: "dir/.db" })).toBe(".db")
  })

  it("a PostgreSQL database's name, never its credentials", () => {
    expect(databaseName({ url: "postgres://user:secret@db.example:5432/gligabao_prod?sslmode=require" })).toBe(
      "gligabao_prod"
    )
    expect(databaseName({ url: "postgresql://localhost/my%20db" })).toBe("my db")
    expect(databaseName({ url: "postgres://user:secret@localhost" })).toBe("postgres")
    expect(databaseName({ url: "not a url with secret" })).toBe("postgres")
  })

  it("the first name given twice", () => {
    expect(duplicateName([])).toBeUndefined()
    expect(duplicateName(["a", "b", "c"])).toBeUndefined()
    expect(duplicateName(["a", "b", "a"])).toBe("a")
    expect(duplicateName(["a", "b", "b", "a"])).toBe("b")
  })
})

describe("isFlagged and ALL_STAGES", () => {
  const stage = (name: string, status: RunStageRow["status"]): RunStageRow => ({
    stage: name,
    status,
    started_at: null,
    finished_at: null,
    duration_ms: null,
    error: null,
    inference_ids: [],
    progress: null,
    detail: null
  })
  const run = (status: RunWithStages["status"], stages: ReadonlyArray<RunStageRow>): RunWithStages => ({
    id: 1,
    pipeline: "text",
    user_id: "u",
    dataset: "main",
    dataset_id: 1,
    artifact_id: 1,
    status,
    error: null,
    params: {},
    queued_at: "2026-01-01T00:00:00.000Z",
    instance_id: "i",
    started_at: null,
    finished_at: null,
    duration_ms: null,
    attempts: 0,
    response: null,
    error_tag: null,
    stages
  })

  it("a succeeded run with a failed stage is flagged; nothing else is", () => {
    expect(isFlagged(run("succeeded", [stage("extract_graph", "succeeded"), stage("resolve_geo", "failed")]))).toBe(
      true
    )
    expect(isFlagged(run("succeeded", [stage("extract_graph", "succeeded"), stage("store", "succeeded")]))).toBe(false)
    expect(isFlagged(run("succeeded", []))).toBe(false)
    // a failed run is failed, not flagged
    expect(isFlagged(run("failed", [stage("extract_graph", "failed")]))).toBe(false)
    expect(isFlagged(run("started", [stage("extract_graph", "failed")]))).toBe(false)
  })

  it("every stage in pipeline order: the text pipeline's, then the image pipeline's", () => {
    expect(ALL_STAGES).toEqual([...TEXT_STAGES, ...IMAGE_STAGES])
    expect(new Set(ALL_STAGES).size).toBe(ALL_STAGES.length)
  })
})
