#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx's loader, so a fresh clone needs no build step.
import { register } from "tsx/esm/api"
import { fileURLToPath, pathToFileURL } from "node:url"
import { dirname, join } from "node:path"

register()
const root = dirname(dirname(fileURLToPath(import.meta.url)))
await import(pathToFileURL(join(root, "src", "cli", "main.ts")).href)
