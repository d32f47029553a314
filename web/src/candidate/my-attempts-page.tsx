import type { PageProps } from "../lib/page";

export function MyAttemptsPage(_props: PageProps) {
  return <h1>MyAttemptsPage</h1>;
}
