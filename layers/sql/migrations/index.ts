/** The migrations, in order, for `Migrator.fromRecord` (keys are `<id>_<name>`). */
import init from "./0001_init.js"

export const migrations = {
  "0001_init": init
}
