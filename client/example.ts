// Imports a pull request as a task and waits until it is READY or FAILED:
//   ASSAY_URL=http://127.0.0.1:8787 ASSAY_TOKEN=$(npm run -s token) ASSAY_ORG=org_1 \
//   PR_URL=http://127.0.0.1:8790/demo/calc/pull/1 npx tsx client/example.ts
import { createAssayClient } from "./src/index";

const client = createAssayClient({ baseUrl: process.env.ASSAY_URL ?? "http://127.0.0.1:8787", token: process.env.ASSAY_TOKEN });

const started = await client.POST("/api/v1/tasks/import-pr", {
  body: { pr_url: process.env.PR_URL!, organization_id: process.env.ASSAY_ORG! },
});
if (started.error) throw new Error(`import refused (${started.response.status}): ${JSON.stringify(started.error.detail)}`);

let task = started.data;
for (let delay = 1000; task.status !== "READY" && task.status !== "FAILED"; delay = Math.min(delay * 2, 10_000)) {
  await new Promise((resolve) => setTimeout(resolve, delay));
  const read = await client.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: task.task_id } } });
  if (read.error) throw new Error(`reading the task failed: ${JSON.stringify(read.error.detail)}`);
  task = read.data;
}
console.log(task.status, task.status === "FAILED" ? task.failure_reason : `tests to make pass: ${task.fail_to_pass?.join(", ")}`);
