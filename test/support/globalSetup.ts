/**
 * Vitest global setup: one throwaway PostgreSQL cluster for the whole run, its admin URL given
 * to the tests as `inject("pgAdminUrl")` (null when PostgreSQL is not installed outside CI, and
 * the PostgreSQL suites then skip). See test/support/databases.ts.
 */
import type { TestProject } from "vitest/node"
import { pgUnavailableReason, startPgCluster } from "./postgres.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** superuser URL of the test cluster, or null when PostgreSQL tests are skipped */
    pgAdminUrl: string | null
    /** why PostgreSQL tests are skipped, when they are */
    pgSkipReason: string | null
  }
}

export default async function setup(project: TestProject) {
  const unavailable = pgUnavailableReason()
  if (unavailable !== undefined) {
    if (process.env.CI === "true") throw new Error(`CI needs PostgreSQL for its tests: ${unavailable}`)
    const banner = "!".repeat(78)
    console.warn(`\n${banner}\n!!! SKIPPING every PostgreSQL test: ${unavailable}\n${banner}\n`)
    project.provide("pgAdminUrl", null)
    project.provide("pgSkipReason", unavailable)
    return
  }
  const cluster = await startPgCluster()
  // a run killed before its teardown must not leave a postgres behind (stop is idempotent)
  process.once("exit", cluster.stop)
  project.provide("pgAdminUrl", cluster.adminUrl)
  project.provide("pgSkipReason", null)
  return () => cluster.stop()
}
