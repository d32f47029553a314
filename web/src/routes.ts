// The app's pages, by address. Each page's module is loaded when first visited, so the
// candidate's workspace (editor, terminal) and the console (charts) are separate downloads.
import type { FunctionComponent } from "preact";

import type { PageProps } from "./lib/page";

export type { PageProps };

export interface PageRoute {
  pattern: string;
  title: string;
  /** "session": needs a signed-in user; "none": the page brings its own credential (an IDE session link). */
  auth: "session" | "none";
  /** Only staff (interviewer or higher) use it. */
  staff?: boolean;
  load: () => Promise<FunctionComponent<PageProps>>;
}

export const ROUTES: PageRoute[] = [
  { pattern: "/", title: "Assay", auth: "session", load: () => import("./pages/home-page").then((m) => m.HomePage) },
  { pattern: "/invites/accept", title: "Accept your invitation", auth: "session", load: () => import("./candidate/accept-invitation-page").then((m) => m.AcceptInvitationPage) },
  { pattern: "/attempts", title: "Your assessments", auth: "session", load: () => import("./candidate/my-attempts-page").then((m) => m.MyAttemptsPage) },
  { pattern: "/attempts/:attemptId", title: "Workspace", auth: "session", load: () => import("./candidate/workspace-page").then((m) => m.WorkspacePage) },
  { pattern: "/ide", title: "IDE session", auth: "none", load: () => import("./candidate/ide-session-page").then((m) => m.IdeSessionPage) },
  { pattern: "/console/tasks", title: "Tasks", auth: "session", staff: true, load: () => import("./interviewer/tasks-page").then((m) => m.TasksPage) },
  { pattern: "/console/tasks/:taskId", title: "Task", auth: "session", staff: true, load: () => import("./interviewer/task-page").then((m) => m.TaskPage) },
  { pattern: "/console/drafts", title: "Task drafts", auth: "session", staff: true, load: () => import("./interviewer/drafts-page").then((m) => m.DraftsPage) },
  { pattern: "/console/drafts/:draftId", title: "Task draft", auth: "session", staff: true, load: () => import("./interviewer/draft-page").then((m) => m.DraftPage) },
  { pattern: "/console/templates", title: "Templates", auth: "session", staff: true, load: () => import("./interviewer/templates-page").then((m) => m.TemplatesPage) },
  { pattern: "/console/attempts/:attemptId/report", title: "Score report", auth: "session", staff: true, load: () => import("./interviewer/report-page").then((m) => m.ReportPage) },
  { pattern: "/console/attempts/:attemptId/live", title: "Live session", auth: "session", staff: true, load: () => import("./live/live-page").then((m) => m.LivePage) },
  { pattern: "/console/attempts/:attemptId/replay", title: "Replay", auth: "session", staff: true, load: () => import("./interviewer/replay-page").then((m) => m.ReplayPage) },
  { pattern: "/console/analytics", title: "Analytics", auth: "session", staff: true, load: () => import("./interviewer/analytics-page").then((m) => m.AnalyticsPage) },
];
