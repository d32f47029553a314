import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it, onTestFinished } from "vitest";
import { JobRegistry } from "../src/job-registry";

async function restartable() {
  const dir = await mkdtemp(join(tmpdir(), "assay-registry-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return async () => {
    const registry = new JobRegistry(dir, 3_600_000);
    await registry.init();
    return registry;
  };
}

it("after a restart, a job that ended is answered as it ended and one that was running runs again", async () => {
  const start = await restartable();
  const before = await start();
  expect(await before.claim("job_done")).toBe(true);
  await before.set("job_done", "SUCCEEDED");
  expect(await before.claim("job_running")).toBe(true);
  await before.set("job_running", "running");
  expect(await before.claim("job_running")).toBe(false);

  const after = await start();
  expect(after.get("job_done")).toBe("SUCCEEDED");
  expect(await after.claim("job_done")).toBe(false);
  expect(after.get("job_running")).toBeNull();
  expect(await after.claim("job_running")).toBe(true);
});

it("a job handed back unfinished is forgotten, so a new offer of it runs", async () => {
  const registry = await (await restartable())();
  expect(await registry.claim("job_handed_back")).toBe(true);
  await registry.set("job_handed_back", "running");
  registry.forget("job_handed_back");
  expect(await registry.claim("job_handed_back")).toBe(true);
});
