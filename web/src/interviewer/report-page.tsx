import type { PageProps } from "../lib/page";

export function ReportPage(_props: PageProps) {
  return <h1>ReportPage</h1>;
}
