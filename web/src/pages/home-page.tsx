import { useEffect } from "preact/hooks";
import { Loading } from "../components/states";
import { isStaff, me } from "../lib/me";
import { navigate } from "../lib/router";

/** The start page sends staff to the console and candidates to their assessments. */
export function HomePage() {
  useEffect(() => navigate(isStaff(me.value) ? "/console/tasks" : "/attempts", true), []);
  return <Loading />;
}
