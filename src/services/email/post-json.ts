import { sendVerdict } from "../../domain/invitations";
import type { SendResult } from "./mail-types";

/** One JSON POST to a mail endpoint, its answer read as a send verdict. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<SendResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json", ...headers },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    return { verdict: "retry", detail: e instanceof Error ? e.message : String(e) };
  }
  const text = (await response.text()).slice(0, 500);
  return { verdict: sendVerdict(response.status), detail: `HTTP ${response.status}${text ? ` ${text}` : ""}` };
}
