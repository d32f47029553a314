import type { PageProps } from "../lib/page";

export function ReplayPage(_props: PageProps) {
  return <h1>ReplayPage</h1>;
}
