import type { PageProps } from "../lib/page";

export function AnalyticsPage(_props: PageProps) {
  return <h1>AnalyticsPage</h1>;
}
