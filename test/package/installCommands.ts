/**
 * The install commands of docs/EMBEDDING.md's Install section, as a user copies them: each `sh`
 * block's lines, a trailing backslash joining the next. The pack test runs exactly these.
 */
import { readFileSync } from "node:fs"

export const EMBEDDING_DOC = new URL("../../docs/EMBEDDING.md", import.meta.url)

export const installCommands = (doc = readFileSync(EMBEDDING_DOC, "utf8")): ReadonlyArray<string> => {
  const start = doc.indexOf("## Install\n")
  if (start === -1) throw new Error("docs/EMBEDDING.md has no Install section")
  const end = doc.indexOf("\n## ", start + 1)
  const section = doc.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
    block[1]!.replace(/\\\n\s*/g, " ").split("\n").map((line) => line.trim()).filter((line) => line !== "")
  )
}

/** A command's words (the docs quote nothing). */
export const words = (command: string): ReadonlyArray<string> => command.split(/\s+/)

/** `name@range` of a word naming a package (a scoped name keeps its first `@`). */
export const packageOf = (word: string): { readonly name: string; readonly range: string | undefined } => {
  const at = word.indexOf("@", 1)
  return at === -1 ? { name: word, range: undefined } : { name: word.slice(0, at), range: word.slice(at + 1) }
}
