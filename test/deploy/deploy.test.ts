/**
 * deploy/Dockerfile and deploy/compose.yaml (docs/DEPLOY.md) are not built or run here (no
 * container engine on the machine). What is checked: the compose file is YAML with the services
 * the doc describes, every path the Dockerfile and the compose file take from the repository
 * exists, the runtime stage carries what the package ships, and both probe /healthz or /readyz.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const deploy = join(root, "deploy")
const dockerfile = readFileSync(join(deploy, "Dockerfile"), "utf8")
// compose uses a YAML merge key (<<: *gligabao), as `docker compose` reads it
const compose = parse(readFileSync(join(deploy, "compose.yaml"), "utf8"), { merge: true })

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((line) => line.trim())
  .filter((line) => line !== "" && !line.startsWith("#"))

const copies = instructions
  .filter((line) => line.startsWith("COPY "))
  .map((line) => {
    const words = line.split(/\s+/).slice(1)
    const from = words.find((w) => w.startsWith("--from="))?.slice("--from=".length)
    const paths = words.filter((w) => !w.startsWith("--"))
    return { from, sources: paths.slice(0, -1), target: paths.at(-1)! }
  })

describe("deploy/Dockerfile", () => {
  it("builds on node:20-slim in two stages", () => {
    const froms = instructions.filter((line) => line.startsWith("FROM "))
    expect(froms).toEqual(["FROM node:20-slim AS build", "FROM node:20-slim"])
  })

  it("copies from the build context only paths that exist in the repository", () => {
    const fromContext = copies.filter((c) => c.from === undefined).flatMap((c) => c.sources)
    expect(fromContext.length).toBeGreaterThan(0)
    for (const path of fromContext) expect(existsSync(join(root, path)), path).toBe(true)
  })

  it("copies into the runtime stage what the package ships (package.json files), plus node_modules", () => {
    const runtime = copies.filter((c) => c.from === "build").flatMap((c) =>
      c.sources.map((s) => s.replace(/^\/app\//, ""))
    )
    const files: ReadonlyArray<string> = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).files
    for (const entry of files) {
      // build/dist/src/**/*.js is in build/dist, src/admin/ui/ is src/admin/ui, ...
      const covered = runtime.some((copied) => entry.replace(/\/$/, "").startsWith(copied))
      expect(covered, entry).toBe(true)
    }
    expect(runtime).toEqual(expect.arrayContaining(["node_modules", "package.json"]))
    // built in the build stage, or in the repository
    for (const path of runtime.filter((p) => !["node_modules", "build/dist"].includes(p))) {
      expect(existsSync(join(root, path)), path).toBe(true)
    }
  })

  it("runs bin/gligabao.js serve and checks /readyz", () => {
    expect(existsSync(join(root, "bin", "gligabao.js"))).toBe(true)
    expect(instructions).toContain(`ENTRYPOINT ["node", "bin/gligabao.js"]`)
    expect(instructions).toContain(`CMD ["serve"]`)
    expect(instructions.find((line) => line.startsWith("HEALTHCHECK"))).toContain("/readyz")
  })
})

describe("deploy/compose.yaml", () => {
  it("is PostgreSQL with pgvector, two gligabao processes on it and an OTLP collector", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["gligabao-a", "gligabao-b", "otel-collector", "postgres"])
    expect(compose.services.postgres.image).toBe("pgvector/pgvector:pg16")
    expect(compose.services["otel-collector"].image).toMatch(/^otel\/opentelemetry-collector/)
    for (const name of ["gligabao-a", "gligabao-b"]) {
      const service = compose.services[name]
      expect(service.build).toEqual({ context: "..", dockerfile: "deploy/Dockerfile" })
      expect(service.environment.GLIGABAO_VECTOR_STORE).toBe("postgres")
      expect(service.environment.DATABASE_URL).toMatch(/^postgres:\/\/gligabao:.*@postgres:5432\/gligabao$/)
      // the tokens are JSON once compose has put the secrets in
      const tokens = JSON.parse(service.environment.GLIGABAO_AUTH_TOKENS.replace(/\$\{[^}]*\}/g, "secret"))
      expect(tokens).toEqual([{ token: "secret", admin: true }, { token: "secret", user_id: "alice" }])
      expect(service.healthcheck.test.join(" ")).toContain("http://127.0.0.1:8080/readyz")
      expect(service.depends_on.postgres).toEqual({ condition: "service_healthy" })
      // telemetry to the collector's OTLP/HTTP port
      expect(service.environment.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://otel-collector:4318")
    }
    expect(compose.services["gligabao-b"].depends_on["gligabao-a"]).toEqual({ condition: "service_healthy" })
  })

  it("mounts only files that exist next to it", () => {
    const binds = Object.values<any>(compose.services)
      .flatMap((service) => service.volumes ?? [])
      .map((volume: string) => volume.split(":")[0]!)
      .filter((source) => source.startsWith("."))
    expect(binds.sort()).toEqual(["./initdb", "./otel-collector.yaml"])
    for (const source of binds) expect(existsSync(join(deploy, source)), source).toBe(true)
    expect(parse(readFileSync(join(deploy, "otel-collector.yaml"), "utf8")).receivers.otlp).toBeDefined()
    expect(readFileSync(join(deploy, "initdb", "01-vector.sql"), "utf8")).toContain(
      "CREATE EXTENSION IF NOT EXISTS vector"
    )
  })
})
