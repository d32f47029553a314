import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";

/**
 * Temporary workspaces for tests that read or write a repository's files without a sandbox;
 * each test's are removed after it. Call once at a test file's top level.
 */
export function temporaryWorkspaces(prefix: string): { workspace(files: Record<string, string>): Promise<string>; scratch(): Promise<string> } {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const scratch = async () => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  return {
    scratch,
    async workspace(files) {
      const dir = await scratch();
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), content);
      }
      return dir;
    },
  };
}
