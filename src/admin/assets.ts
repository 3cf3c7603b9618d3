/**
 * The admin page's files: ours from src/admin/ui, and Cytoscape.js from its npm package, so the
 * page works offline and needs no build step. Read once, on first use; only these names are
 * served (no path from the URL ever reaches the file system).
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
}

/** The package's root: the files stay in src/admin/ui whether this module runs from src or from a build. */
const packageRoot = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
}

const ui = (file: string) => join(packageRoot(), "src", "admin", "ui", file)

const FILES: Readonly<Record<string, { readonly path: () => string; readonly contentType: string }>> = {
  "index.html": { path: () => ui("index.html"), contentType: "text/html; charset=utf-8" },
  "admin.js": { path: () => ui("admin.js"), contentType: "text/javascript; charset=utf-8" },
  "common.js": { path: () => ui("common.js"), contentType: "text/javascript; charset=utf-8" },
  "runs.js": { path: () => ui("runs.js"), contentType: "text/javascript; charset=utf-8" },
  "inferences.js": { path: () => ui("inferences.js"), contentType: "text/javascript; charset=utf-8" },
  "graph.js": { path: () => ui("graph.js"), contentType: "text/javascript; charset=utf-8" },
  "memory.js": { path: () => ui("memory.js"), contentType: "text/javascript; charset=utf-8" },
  "admin.css": { path: () => ui("admin.css"), contentType: "text/css; charset=utf-8" },
  "cytoscape.min.js": {
    path: () => createRequire(import.meta.url).resolve("cytoscape/dist/cytoscape.min.js"),
    contentType: "text/javascript; charset=utf-8"
  }
}

const loaded = new Map<string, Asset>()

/** The asset of that name, or undefined for any other name. Throws if a shipped file is missing. */
export const adminAsset = (name: string): Asset | undefined => {
  const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined
  if (file === undefined) return undefined
  let asset = loaded.get(name)
  if (asset === undefined) {
    asset = { body: readFileSync(file.path()), contentType: file.contentType }
    loaded.set(name, asset)
  }
  return asset
}

/**
 * What the page may load and run: only its own origin's scripts and styles (inline styles for
 * Cytoscape's canvas sizing), no framing by other sites.
 */
export const ADMIN_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
