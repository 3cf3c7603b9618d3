/** A one-line progress bar for the terminal: `[#########...........]  9/20 chunks`. */
export const progressBar = (done: number, total: number, width = 30): string => {
  const safeTotal = Math.max(1, total)
  const filled = Math.round((Math.min(done, safeTotal) / safeTotal) * width)
  const pad = String(total).length
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${String(done).padStart(pad)}/${total} chunks`
}
