// Starting work on a task: a new attempt, or the open one when there is one already (the API's
// 409 names it), so a second click or a second tab never strands the candidate.
import { api, call } from "../lib/data";
import { ApiError } from "../lib/errors";

const ATTEMPT_ID = /\batt_[0-9a-f]{32}\b/;

/** The id of the attempt to open for `taskId`: a new one, or the one already open. */
export async function attemptFor(taskId: string): Promise<string> {
  try {
    const created = await call(api.POST("/api/v1/attempts", { body: { task_id: taskId } }));
    return created.id;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 409) throw error;
    const named = ATTEMPT_ID.exec(error.message)?.[0];
    if (named) return named;
    const open = await call(api.GET("/api/v1/attempts", { params: { query: { task_id: taskId, limit: 20 } } }));
    const found = open.items.find((a) => a.status === "NOT_STARTED" || a.status === "IN_PROGRESS");
    if (found) return found.id;
    throw error;
  }
}
