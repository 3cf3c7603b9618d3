/**
 * The words a name is found by (`GET /v1/gb/entities?name=`, MCP `get_entity`): letters and
 * digits, case and accents folded ("Zoë O'Brien" -> zoe, o, brien), so that a part of a name, in
 * any case and with or without its accents, finds the whole. Migration 0017 keeps a frozen copy.
 */

// a combining mark left by canonical decomposition (the accent of "é" once it is "e" + U+0301)
const MARKS = /\p{M}+/gu
// a run of anything but letters and digits separates words
const SEPARATORS = /[^\p{L}\p{N}]+/u

/** The folded words of a name, in order, repeats kept. */
export const nameWords = (name: string): Array<string> =>
  name.normalize("NFKD").replace(MARKS, "").toLowerCase().split(SEPARATORS).filter((w) => w !== "")

/** A name folded whole: its words joined by one space ("Zoë  O'Brien" -> "zoe o brien"). */
export const foldedName = (name: string): string => nameWords(name).join(" ")
