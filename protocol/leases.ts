import { z } from "zod";
import { ID_PATTERN } from "./jobs";

/**
 * A runner's heartbeat to a job's `lease.url` and the Worker's answer (docs/runner-protocol.md,
 * "Leases"). Not strict, like the callback: a field a newer runner adds is ignored.
 */

const jobIds = z.array(z.string().regex(ID_PATTERN, "not a job id")).max(1000);

export const leasesSchema = z
  .object({
    runner_id: z.string().min(1).max(128).describe("The runner instance, as it answered `POST /jobs` with it"),
    held: jobIds.describe("Jobs the runner still has, queued, running or reporting: their leases are renewed"),
    released: jobIds.default([]).describe("Jobs it hands back unfinished (it is draining): offered to another runner at once"),
  })
  .meta({ id: "RunnerLeases" });

export const leasesAnswerSchema = z
  .object({
    renewed: z.array(z.string()).describe("Held jobs whose leases now run until the next heartbeat is due, and a little more"),
    lost: z.array(z.string()).describe("Held jobs that are no longer this runner's (finished, given up, or requeued): stop them"),
  })
  .meta({ id: "RunnerLeasesRenewed" });

/** A heartbeat as the runner sends it. */
export type LeasesBody = z.input<typeof leasesSchema>;
export type LeasesAnswer = z.infer<typeof leasesAnswerSchema>;
