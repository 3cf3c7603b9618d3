/**
 * Real-browser tests: Debian's Chromium driven by playwright-core (no browser download). A
 * missing Chromium is a failure, not a skip: CI (.ci/run) installs it.
 *
 *   const browser = await launchChromium()
 *   const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
 *   const watch = watchPage(page)
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"

/** Where screenshots go (build/ is git-ignored). */
export const ARTIFACTS_DIR = fileURLToPath(new URL("../../build/test-artifacts/", import.meta.url))

export const launchChromium = async (): Promise<Browser> => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: the browser tests need Debian's chromium ` +
        "(apt-get install chromium; .ci/run installs it when it is missing)"
    )
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // no sandbox: CI runs as root in a container; the rest keeps Chromium off the network
    args: [
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-default-apps",
      "--no-first-run"
    ]
  })
}

export interface PageWatch {
  /** console messages of type error, and uncaught exceptions */
  readonly errors: Array<string>
  /** every URL the page requested */
  readonly requests: Array<string>
}

export const watchPage = (page: Page): PageWatch => {
  const watch: PageWatch = { errors: [], requests: [] }
  page.on("console", (message) => {
    if (message.type() === "error") watch.errors.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => watch.errors.push(`uncaught: ${error.message}`))
  page.on("request", (request) => watch.requests.push(request.url()))
  return watch
}

/** Saves a screenshot of the page as build/test-artifacts/<name>. */
export const screenshot = async (page: Page, name: string): Promise<void> => {
  mkdirSync(ARTIFACTS_DIR, { recursive: true })
  await page.screenshot({ path: join(ARTIFACTS_DIR, name), fullPage: true })
}
