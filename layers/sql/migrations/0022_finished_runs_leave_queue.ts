/**
 * A run that ends (succeeded, failed or cancelled) takes its request out of the queue in the same
 * statement, by a trigger: finishing a run is then one UPDATE instead of a transaction of two
 * statements (issue 39). Nothing reads a finished run's request; the store transaction of a
 * text already deleted it, and a cancel deletes it itself, so the trigger mostly finds nothing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const ENDED = "('succeeded', 'failed', 'cancelled')"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  const statements = pg
    ? [
      `CREATE FUNCTION gb_remember_runs_ended() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM gb_remember_queue WHERE run_id = NEW.id;
        RETURN NULL;
      END $$`,
      `CREATE TRIGGER gb_remember_runs_ended AFTER UPDATE OF status ON gb_remember_runs
        FOR EACH ROW WHEN (NEW.status IN ${ENDED} AND OLD.status IS DISTINCT FROM NEW.status)
        EXECUTE FUNCTION gb_remember_runs_ended()`
    ]
    : [
      `CREATE TRIGGER gb_remember_runs_ended AFTER UPDATE OF status ON gb_remember_runs
        WHEN new.status IN ${ENDED} AND old.status IS NOT new.status BEGIN
        DELETE FROM gb_remember_queue WHERE run_id = new.id;
      END`
    ]
  for (const statement of statements) yield* sql.unsafe(statement)
  // runs that ended before this migration and left their request behind
  yield* sql.unsafe(`DELETE FROM gb_remember_queue WHERE run_id IN
    (SELECT id FROM gb_remember_runs WHERE status IN ${ENDED})`)
})
