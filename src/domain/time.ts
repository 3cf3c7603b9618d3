/**
 * Times on the wire and in the database are RFC 3339 UTC strings with milliseconds
 * (`2025-01-31T00:00:00.000Z`): fixed width, so they sort and compare as text.
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

/** Parses an RFC 3339 timestamp (with offset) into the canonical UTC form, or undefined. */
export const parseRfc3339 = (input: string): string | undefined => {
  const m = RFC3339.exec(input.trim())
  if (m === null) return undefined
  const [, , month, day, hour, minute, second] = m
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > 31) return undefined
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60) return undefined
  const ms = Date.parse(input.trim().replace(" ", "T"))
  if (!Number.isFinite(ms)) return undefined
  return toIso(ms)
}

/** Canonical form of an epoch-milliseconds instant; years outside 0000-9999 are not representable. */
export const toIso = (epochMs: number): string => new Date(epochMs).toISOString()

export const isoNow = (epochMs: number): string => toIso(epochMs)
