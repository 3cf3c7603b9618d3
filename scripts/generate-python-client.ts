/**
 * Writes clients/python/gligabao/_types.py from the OpenAPI document gligabao serves at
 * /openapi.json: `npx tsx scripts/generate-python-client.ts` builds it as the server does
 * (src/http/Http.ts, openApiDocument); `--from http://127.0.0.1:8080` reads it from a running
 * server instead. `--check` writes nothing and fails when the committed file differs.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { openApiDocument } from "../src/http/Http.js"
import { pythonTypes } from "./python-client/generate.js"

export const PYTHON_TYPES_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "clients",
  "python",
  "gligabao",
  "_types.py"
)

const main = async (args: ReadonlyArray<string>) => {
  const from = args.indexOf("--from")
  const doc = from === -1
    ? JSON.parse(JSON.stringify(openApiDocument))
    : await (await fetch(new URL("/openapi.json", args[from + 1]))).json()
  const text = pythonTypes(doc)
  if (args.includes("--check")) {
    if (readFileSync(PYTHON_TYPES_FILE, "utf8") !== text) {
      console.error(`${PYTHON_TYPES_FILE} differs from the document: run npx tsx scripts/generate-python-client.ts`)
      process.exit(1)
    }
    return
  }
  writeFileSync(PYTHON_TYPES_FILE, text)
  console.log(`wrote ${PYTHON_TYPES_FILE}`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main(process.argv.slice(2))
}
