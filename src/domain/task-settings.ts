import type { JobRuntime, TestFramework } from "./runner-jobs";

/**
 * What an import may state instead of leaving it to detection (docs/tasks-from-prs.md,
 * "Stated settings"). Each unset field is detected from the repository. The commands are
 * argv arrays, run only in the runner's sandbox and never through a shell of ours.
 */
export interface TaskSettings {
  install_command: string[] | null;
  test_command: string[] | null;
  framework: TestFramework | null;
  /** Test files or directories, in place of the test command's own paths. */
  test_paths: string[] | null;
  node_version: string | null;
  python_version: string | null;
  /**
   * Why `node_version` is what it is when validation set it: the tests could not start on the
   * versions before it (docs/tasks-from-prs.md, "Node versions"). Null when stated or detected.
   */
  node_reason: string | null;
  /**
   * Whether staff of the task's organization may join its started attempts live (docs/api.md,
   * "Live sessions"). Off by default; not an import setting, but kept with them in the task's
   * settings, and changed with PATCH /tasks/{task_id}.
   */
  live_sessions: boolean;
}

export const NO_SETTINGS: TaskSettings = {
  install_command: null,
  test_command: null,
  framework: null,
  test_paths: null,
  node_version: null,
  python_version: null,
  node_reason: null,
  live_sessions: false,
};

/** Whether the task's attempts may have live sessions; tasks stored before the setting existed have none. */
export function liveSessionsOn(settings: Partial<TaskSettings> | null): boolean {
  return settings?.live_sessions === true;
}

/** The install and runtime every runner job of the task carries. */
export function jobRuntime(settings: TaskSettings | null): JobRuntime {
  const s = settings ?? NO_SETTINGS;
  return { install: { command: s.install_command }, runtime: { node: s.node_version, python: s.python_version, ...(s.node_reason && { node_reason: s.node_reason }) } };
}

/** Stated settings over stored ones: a retry changes the fields it names and keeps the rest; a stated Node is the import's own. */
export function mergeSettings(stored: TaskSettings | null, changes: Partial<TaskSettings>): TaskSettings {
  return { ...NO_SETTINGS, ...stored, ...changes, ...(changes.node_version !== undefined && { node_reason: null }) };
}
