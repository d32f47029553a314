// An executable as a shell would find it, for the launchers (jest-launcher.mjs,
// mocha-launcher.mjs) that start a framework the way the project's command names it.
import { accessSync, constants } from "node:fs";
import { delimiter, join, resolve } from "node:path";

/** A path as given, a name on PATH; null when PATH has no such executable. */
export function locate(name) {
  if (name.includes("/")) return resolve(name);
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not in this directory.
    }
  }
  return null;
}
