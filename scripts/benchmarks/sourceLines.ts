/**
 * A V8 location as a line of source, for the in-process bench tools (bench-ops, bench-alloc):
 * the script the inspector reported, mapped through tsx's inline source map when it has one,
 * its path relative to the repository (or from `node_modules/` on).
 */
import { SourceMap } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = join(import.meta.dirname, "..", "..")

/** A script as `Debugger.scriptParsed` reports it; its source map is read the first time it is needed. */
export interface ParsedScript {
  readonly url: string
  readonly sourceMapURL: string
  map?: SourceMap | undefined
}

const sourceMapOf = (s: ParsedScript) => {
  if (!("map" in s)) {
    const inline = /^data:application\/json[^,]*;base64,(.*)$/.exec(s.sourceMapURL)
    s.map = inline === null ? undefined : new SourceMap(JSON.parse(Buffer.from(inline[1]!, "base64").toString("utf8")))
  }
  return s.map
}

/** `node_modules/...` for a package's file, the repository-relative path for ours, a `node:` URL as it is. */
export const shortPath = (url: string) => {
  const path = url.startsWith("file://") ? fileURLToPath(url) : url
  const nm = path.lastIndexOf("node_modules/")
  return nm !== -1 ? path.slice(nm) : path.startsWith("/") ? relative(ROOT, path) : path
}

/** The source file and 1-based line of a 0-based position in `url` (a package's file is not mapped). */
export const sourceLine = (
  url: string,
  script: ParsedScript | undefined,
  lineNumber: number,
  columnNumber: number
): { readonly file: string; readonly line: number } => {
  const map = script === undefined || url.includes("node_modules") ? undefined : sourceMapOf(script)
  if (map !== undefined) {
    const entry = map.findEntry(lineNumber, columnNumber) as { originalSource?: string; originalLine?: number }
    if (entry.originalSource !== undefined && entry.originalLine !== undefined) {
      return { file: shortPath(entry.originalSource), line: entry.originalLine + 1 }
    }
  }
  return { file: shortPath(url), line: lineNumber + 1 }
}
