/**
 * Prints one plain closing line, `N passed, N failed` (and `, N skipped`), after vitest's own
 * summary, so any tool that reads a run's last line (CI included) sees the counts.
 */
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
      // a file that failed to load has no tests to count but is a failure all the same
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++
    }
    const line = `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`
    // after vitest's own summary, which it prints later: last thing before the process exits
    process.once("exit", () => process.stdout.write(`\n${line}\n`))
  }
}
