/**
 * A migration never imports runtime code: it imports `effect`, `@effect/sql` and modules of its
 * own folder, and nothing else. What an old migration does must not change when runtime code
 * does (FullText.ts's DDL once reached migration 0013 through an import; it is frozen there now).
 * One set of migrations serves both dialects (`sql.onDialectOrElse` inside), so this one folder is
 * every migration SQLite and PostgreSQL run.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "layers", "sql", "migrations")

/** The packages a migration may import (their subpaths too). */
const PACKAGES = ["effect", "@effect/sql"]

/** Every module a file names: static and dynamic imports, `export ... from`, `require`. */
const specifiers = (source: string): ReadonlyArray<string> =>
  ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName)

/** The specifiers of `file` (a path in the migrations folder) that are not allowed there. */
const forbidden = (file: string, source: string): ReadonlyArray<string> =>
  specifiers(source).filter((specifier) => {
    if (specifier.startsWith(".")) {
      const target = relative(MIGRATIONS, resolve(dirname(file), specifier))
      return target.startsWith("..")
    }
    return !PACKAGES.some((p) => specifier === p || specifier.startsWith(`${p}/`))
  })

const files = readdirSync(MIGRATIONS, { recursive: true, encoding: "utf8" })
  .filter((name) => name.endsWith(".ts"))
  .map((name) => join(MIGRATIONS, name))
  .sort()

describe("the migrations import no runtime code", () => {
  it("finds every migration and reads its imports", () => {
    const names = files.map((f) => relative(MIGRATIONS, f))
    expect(names).toContain("index.ts")
    expect(names).toContain("0001_init.ts")
    expect(names).toContain("0013_dataset_full_text.ts")
    expect(names.filter((n) => /^\d{4}_/.test(n)).length).toBeGreaterThanOrEqual(14)
    for (const file of files.filter((f) => /\/\d{4}_[^/]*\.ts$/.test(f))) {
      expect(specifiers(readFileSync(file, "utf8")), file).toContain("effect")
    }
  })

  for (const file of files) {
    it(`${relative(MIGRATIONS, file)} imports effect, @effect/sql and its own folder only`, () => {
      expect(forbidden(file, readFileSync(file, "utf8"))).toEqual([])
    })
  }

  it("tells a runtime import from an allowed one", () => {
    const file = join(MIGRATIONS, "0099_example.ts")
    expect(forbidden(
      file,
      `import { SqlClient } from "@effect/sql"
      import { Effect } from "effect"
      import * as Option from "effect/Option"
      import { frozen } from "./shared/frozen.js"
      import type { Statement } from "./0013_dataset_full_text.js"
      import { createFullText } from "../FullText.js"
      import type { Database } from "../../../src/services/Database.js"
      export { x } from "../Sqlite.js"
      import { SqliteClient } from "@effect/sql-sqlite-node"
      import { readFileSync } from "node:fs"
      const lazy = () => import("../index.js")`
    )).toEqual([
      "../FullText.js",
      "../../../src/services/Database.js",
      "../Sqlite.js",
      "@effect/sql-sqlite-node",
      "node:fs",
      "../index.js"
    ])
  })
})
