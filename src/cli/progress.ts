/** A one-line progress bar for the terminal: `[#########...........]  9/20 chunks`. */
export const progressBar = (done: number, total: number, width = 30): string => {
  const safeTotal = Math.max(1, total)
  const filled = Math.round((Math.min(done, safeTotal) / safeTotal) * width)
  const pad = String(total).length
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${String(done).padStart(pad)}/${total} chunks`
}

/** The import's line: `120/1000 items done, 3 failed, 12.5 items/s` (and `, 2 cancelled` when some were). */
export const importProgress = (
  done: number,
  failed: number,
  total: number,
  elapsedMs: number,
  cancelled = 0
): string => {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0
  return `${done}/${total} items done, ${failed} failed${cancelled > 0 ? `, ${cancelled} cancelled` : ""}, ${
    rate.toFixed(1)
  } items/s`
}

/**
 * Without a terminal (a log, a pipe) the import's line is printed this often rather than
 * redrawn, so a long import shows it is alive without flooding the log.
 */
export const PROGRESS_LINE_EVERY_MS = 5_000
